/*
 * An impostor of the sandboxd agent for the adversarial suite (tests/adversarial.rs), run
 * inside a sandbox: it dials the service's agent socket like the real agent, says the hello of
 * an agent from before protocol version 2 (it cannot know the sandbox's secret, so the service
 * refuses it), and would answer every request it got with something hostile.
 *
 * Usage: fake_agent MODE SECONDS [CONNECTIONS]
 *
 * MODE is what a request gets back:
 *   garbage    bytes that are no frame at all (an unknown frame kind);
 *   oversized  a frame header announcing 4 GiB, then as many bytes as the service takes;
 *   badjson    a well-sized JSON frame that is not JSON;
 *   silent     nothing, ever (the connection stays open);
 *   flood      a valid "started" event, then stdout frames without end and never an exit;
 *   badhello   no valid hello at all: every other connection says nothing, the others open
 *              with a frame header announcing 4 GiB (the service must never park these).
 *
 * It detaches (fork + setsid, so the command that started it can end), prints the pid of the
 * detached process, keeps CONNECTIONS (default 16, more than the service parks) connections
 * open, redials those the service closes, and exits after SECONDS whatever happens.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SOCKET_PATH "/.sandboxd/agent.sock"
#define MAX_CONNECTIONS 64

enum { KIND_JSON = 1, KIND_STDOUT = 2 };

static int write_all(int fd, const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int write_frame(int fd, unsigned char kind, const void *payload, unsigned int len) {
    unsigned char header[5] = {kind, (unsigned char)(len >> 24), (unsigned char)(len >> 16),
                               (unsigned char)(len >> 8), (unsigned char)len};
    if (write_all(fd, header, sizeof header) < 0) {
        return -1;
    }
    return write_all(fd, payload, len);
}

static int dial(const char *mode, int index) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, SOCKET_PATH, sizeof address.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        close(fd);
        return -1;
    }
    if (strcmp(mode, "badhello") == 0) {
        if (index % 2 == 1) {
            unsigned char header[5] = {KIND_JSON, 0xFF, 0xFF, 0xFF, 0xF0};
            write_all(fd, header, sizeof header);
        }
        return fd;
    }
    char hello[128];
    int len = snprintf(hello, sizeof hello, "{\"type\":\"hello\",\"version\":1,\"pid\":%d}",
                       (int)getpid());
    if (write_frame(fd, KIND_JSON, hello, (unsigned int)len) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Answers one request; returns whether to keep the connection open afterwards. */
static int answer(int fd, const char *mode, time_t deadline) {
    static unsigned char junk[65536];
    if (strcmp(mode, "garbage") == 0) {
        for (size_t i = 0; i < sizeof junk; i++) {
            junk[i] = (unsigned char)(rand() | 0x80);
        }
        junk[0] = 0xEE; /* no such frame kind */
        write_all(fd, junk, 4096);
        return 0;
    }
    if (strcmp(mode, "oversized") == 0) {
        unsigned char header[5] = {KIND_JSON, 0xFF, 0xFF, 0xFF, 0xFF};
        write_all(fd, header, sizeof header);
        memset(junk, 'A', sizeof junk);
        for (int i = 0; i < 64 && time(NULL) < deadline; i++) {
            if (write_all(fd, junk, sizeof junk) < 0) {
                break;
            }
        }
        return 0;
    }
    if (strcmp(mode, "badjson") == 0) {
        memset(junk, '{', sizeof junk);
        write_frame(fd, KIND_JSON, junk, 1 << 16);
        return 0;
    }
    if (strcmp(mode, "flood") == 0) {
        const char *started = "{\"type\":\"started\",\"pid\":1}";
        write_frame(fd, KIND_JSON, started, (unsigned int)strlen(started));
        memset(junk, 'y', sizeof junk);
        while (time(NULL) < deadline) {
            if (write_frame(fd, KIND_STDOUT, junk, 32768) < 0) {
                break;
            }
        }
        return 0;
    }
    return 1; /* silent: keep it open, say nothing */
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODE SECONDS [CONNECTIONS]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    int seconds = atoi(argv[2]);
    int count = argc > 3 ? atoi(argv[3]) : 16;
    if (seconds <= 0 || seconds > 300) {
        seconds = 10;
    }
    if (count <= 0 || count > MAX_CONNECTIONS) {
        count = 16;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child > 0) {
        printf("%d\n", (int)child);
        return 0;
    }
    setsid();
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    signal(SIGPIPE, SIG_IGN);
    srand((unsigned int)getpid());
    time_t deadline = time(NULL) + seconds;
    struct pollfd fds[MAX_CONNECTIONS];
    for (int i = 0; i < count; i++) {
        fds[i].fd = dial(mode, i);
        fds[i].events = POLLIN;
    }
    static char buffer[65536];
    while (time(NULL) < deadline) {
        int redial = 0;
        for (int i = 0; i < count; i++) {
            if (fds[i].fd < 0) {
                fds[i].fd = dial(mode, i);
                redial = 1;
            }
        }
        if (redial) {
            usleep(20000); /* the service may be refusing: do not spin */
        }
        if (poll(fds, (nfds_t)count, 100) <= 0) {
            continue;
        }
        for (int i = 0; i < count; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n <= 0 || !answer(fds[i].fd, mode, deadline)) {
                close(fds[i].fd);
                fds[i].fd = -1;
            }
        }
    }
    return 0;
}
