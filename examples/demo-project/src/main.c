#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	const char *url = getenv("DATABASE_URL");
	printf("demo app: database %s\n", url ? "configured" : "not configured");
	return 0;
}
