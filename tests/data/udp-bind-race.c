/* tests/data/udp-bind-race.c PORT TRIES: bind UDP sockets to [::1]:PORT+1 (v6 only) while a
 * second thread flips the address's port between PORT+1 and PORT, so that a check made on one
 * read of the address and a bind made on another see different ports. Prints how many binds got
 * each port and how many were refused; "won" (exit 0) as soon as one socket holds PORT. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in6 addr;
static volatile int stop;
static int port;

static void *flip(void *unused) {
    volatile unsigned short *at = &addr.sin6_port;
    unsigned short asked = htons(port + 1), swapped = htons(port);
    (void)unused;
    while (!stop) {
        *at = asked;
        for (volatile int i = 0; i < 200; i++);
        *at = swapped;
        for (volatile int i = 0; i < 200; i++);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    port = atoi(argv[1]);
    int tries = atoi(argv[2]), one = 1, asked = 0, refused = 0;
    addr.sin6_family = AF_INET6;
    inet_pton(AF_INET6, "::1", &addr.sin6_addr);
    pthread_t thread;
    pthread_create(&thread, 0, flip, 0);
    for (int i = 0; i < tries; i++) {
        int s = socket(AF_INET6, SOCK_DGRAM, 0);
        setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        if (bind(s, (struct sockaddr *)&addr, sizeof addr) == 0) {
            struct sockaddr_in6 got;
            socklen_t len = sizeof got;
            getsockname(s, (struct sockaddr *)&got, &len);
            if (ntohs(got.sin6_port) == port) {
                stop = 1;
                printf("won after %d binds\n", i + 1);
                return 0;
            }
            asked++;
        } else if (errno == EADDRINUSE) {
            refused++;
        }
        close(s);
    }
    stop = 1;
    printf("lost: %d bound as asked, %d refused\n", asked, refused);
    return 1;
}
