/*
 * A fork bomb for the adversarial suite (tests/adversarial.rs), run inside a sandbox.
 *
 * Usage: bomb SECONDS [escape]
 *
 * Every process forks as fast as it can until SECONDS have passed, then exits. With `escape`,
 * every child first makes itself a new session (setsid), leaving the process group that a
 * command's timeout kills. The original
 * process prints how many forks succeeded and failed in total. Two safety nets keep this from
 * taking a developer's machine down should a sandbox's pids ceiling NOT hold: a counter shared
 * by all the processes stops forking after MAX_FORKS successful forks, and every process exits
 * at the deadline whatever happens.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FORKS 4096

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 3;
    int escape = argc > 2 && strcmp(argv[2], "escape") == 0;
    if (seconds <= 0 || seconds > 120) {
        seconds = 3;
    }
    long *counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (counts == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    pid_t root = getpid();
    time_t deadline = time(NULL) + seconds;
    while (time(NULL) < deadline) {
        if (__atomic_load_n(&counts[0], __ATOMIC_RELAXED) >= MAX_FORKS) {
            usleep(10000);
            continue;
        }
        pid_t pid = fork();
        if (pid > 0) {
            __atomic_add_fetch(&counts[0], 1, __ATOMIC_RELAXED);
        } else if (pid < 0) {
            __atomic_add_fetch(&counts[1], 1, __ATOMIC_RELAXED);
        } else if (escape) {
            setsid();
        }
        /* pid == 0: the child goes on forking too. */
    }
    if (getpid() != root) {
        return 0;
    }
    /* Reap our own children; the others are reaped by the sandbox's init. */
    usleep(300000);
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    printf("forks=%ld failures=%ld\n", __atomic_load_n(&counts[0], __ATOMIC_RELAXED),
           __atomic_load_n(&counts[1], __ATOMIC_RELAXED));
    return 0;
}
