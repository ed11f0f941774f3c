/* attack-ptrace PID: tries PTRACE_ATTACH (then detaches). Exit 0 when the
 * attach worked, 1 when refused (errno printed). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	pid_t pid = atoi(argv[1]);
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0) {
		printf("refused: %s\n", strerror(errno));
		return 1;
	}
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	printf("attached\n");
	return 0;
}
