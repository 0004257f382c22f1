// See include/clinuxnet.h: roomtap_spawn.
#define _GNU_SOURCE
#include "clinuxnet.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int roomtap_spawn(const char *path, char *const argv[], char *const envp[], int output_fd, int death_signal) {
    pid_t parent = getpid();
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(null_fd);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        if (death_signal > 0 && prctl(PR_SET_PDEATHSIG, death_signal) != 0) _exit(126);
        if (getppid() != parent) _exit(126);  // the parent died before prctl took effect
        setpgid(0, 0);
        // The signals a worker blocks or ignores must not follow into the recorder.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (dup2(null_fd, 0) < 0 || dup2(output_fd, 1) < 0 || dup2(output_fd, 2) < 0) _exit(126);
        syscall(SYS_close_range, 3U, ~0U, 0U);
        execve(path, argv, envp);
        _exit(127);
    }
    close(null_fd);
    return pid;
}
