/* Runs a command as on a kernel without some of what isolate needs, answering as gVisor answers:
 * `kernel-without landlock,notify -- CMD...`. landlock: every Landlock call is ENOSYS (no
 * Landlock at all); notify: a seccomp filter asking for a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER)
 * is EINVAL. Made by the tests (tests/suite/containers.rs) with the machine's C compiler. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define ERRNO(e) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e))

int main(int argc, char **argv) {
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: kernel-without landlock,notify -- CMD...\n");
        return 2;
    }
    int landlock = strstr(argv[1], "landlock") != NULL;
    int notify = strstr(argv[1], "notify") != NULL;
    struct sock_filter code[32];
    int n = 0;
    code[n++] = (struct sock_filter)LOAD_NR;
    if (landlock) {
        for (int nr = 444; nr <= 446; nr++) {
            code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
            code[n++] = (struct sock_filter)ERRNO(ENOSYS);
        }
    }
    if (notify) {
        /* seccomp(SECCOMP_SET_MODE_FILTER, flags with NEW_LISTENER, ...) */
        code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_seccomp, 0, 5);
        code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
        code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_SET_MODE_FILTER, 0, 3);
        code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
        code[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0, 1);
        code[n++] = (struct sock_filter)ERRNO(EINVAL);
    }
    code[n++] = (struct sock_filter)ALLOW;
    struct sock_fprog prog = {.len = (unsigned short)n, .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        perror("kernel-without: seccomp");
        return 125;
    }
    execvp(argv[3], argv + 3);
    perror("kernel-without: exec");
    return 127;
}
