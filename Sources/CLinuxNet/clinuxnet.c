// See include/clinuxnet.h.
#define _GNU_SOURCE
#include "clinuxnet.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/// Room for one SCM_TIMESTAMPNS control message per datagram.
#define ROOMTAP_CONTROL_SPACE CMSG_SPACE(sizeof(struct timespec))

struct roomtap_recv_batch {
    unsigned count;
    unsigned size;
    unsigned char *storage;
    struct iovec *iovecs;
    struct mmsghdr *headers;
    unsigned char *control;
    struct sockaddr_storage *sources;
    /// CLOCK_MONOTONIC minus CLOCK_REALTIME at the last read, and CLOCK_MONOTONIC then (ns).
    int64_t realtime_to_monotonic;
    uint64_t read_monotonic;
};

static uint64_t nanoseconds(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

roomtap_recv_batch *roomtap_recv_batch_create(unsigned count, unsigned size) {
    roomtap_recv_batch *batch = calloc(1, sizeof *batch);
    if (batch == NULL) return NULL;
    batch->count = count;
    batch->size = size;
    batch->storage = malloc((size_t)count * size);
    batch->iovecs = calloc(count, sizeof *batch->iovecs);
    batch->headers = calloc(count, sizeof *batch->headers);
    batch->control = calloc(count, ROOMTAP_CONTROL_SPACE);
    batch->sources = calloc(count, sizeof *batch->sources);
    if (batch->storage == NULL || batch->iovecs == NULL || batch->headers == NULL || batch->control == NULL ||
        batch->sources == NULL) {
        roomtap_recv_batch_destroy(batch);
        return NULL;
    }
    for (unsigned k = 0; k < count; k++) {
        batch->iovecs[k].iov_base = batch->storage + (size_t)k * size;
        batch->iovecs[k].iov_len = size;
        batch->headers[k].msg_hdr.msg_iov = &batch->iovecs[k];
        batch->headers[k].msg_hdr.msg_iovlen = 1;
    }
    return batch;
}

void roomtap_recv_batch_destroy(roomtap_recv_batch *batch) {
    if (batch == NULL) return;
    free(batch->storage);
    free(batch->iovecs);
    free(batch->headers);
    free(batch->control);
    free(batch->sources);
    free(batch);
}

int roomtap_recv_batch_read(roomtap_recv_batch *batch, int fd) {
    // Each datagram's source address, and room for its kernel receive time (SO_TIMESTAMPNS).
    for (unsigned k = 0; k < batch->count; k++) {
        batch->headers[k].msg_hdr.msg_name = &batch->sources[k];
        batch->headers[k].msg_hdr.msg_namelen = sizeof batch->sources[k];
        batch->headers[k].msg_hdr.msg_control = batch->control + (size_t)k * ROOMTAP_CONTROL_SPACE;
        batch->headers[k].msg_hdr.msg_controllen = ROOMTAP_CONTROL_SPACE;
    }
    int count = recvmmsg(fd, batch->headers, batch->count, MSG_DONTWAIT, NULL);
    uint64_t monotonic = nanoseconds(CLOCK_MONOTONIC);
    uint64_t realtime = nanoseconds(CLOCK_REALTIME);
    batch->read_monotonic = monotonic;
    batch->realtime_to_monotonic = (int64_t)(monotonic - realtime);
    return count;
}

uint64_t roomtap_recv_batch_arrival(const roomtap_recv_batch *batch, unsigned k) {
    struct msghdr *header = &batch->headers[k].msg_hdr;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(header); c != NULL; c = CMSG_NXTHDR(header, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
        struct timespec ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        uint64_t realtime = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        uint64_t arrival = realtime + (uint64_t)batch->realtime_to_monotonic;
        // Never later than the read; a wall-clock step between the two is ignored.
        if (arrival > batch->read_monotonic || batch->read_monotonic - arrival > 10000000000u) {
            return batch->read_monotonic;
        }
        return arrival;
    }
    return batch->read_monotonic;
}

int roomtap_socket_enable_timestamps(int fd) {
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

const void *roomtap_recv_batch_datagram(const roomtap_recv_batch *batch, unsigned k, unsigned *length) {
    *length = batch->headers[k].msg_len;
    return batch->iovecs[k].iov_base;
}

int roomtap_recv_batch_source(const roomtap_recv_batch *batch, unsigned k, uint64_t *high, uint64_t *low) {
    const struct sockaddr_storage *source = &batch->sources[k];
    const unsigned char *bytes;
    int family;
    if (source->ss_family == AF_INET) {
        bytes = (const unsigned char *)&((const struct sockaddr_in *)source)->sin_addr;
        family = 4;
    } else if (source->ss_family == AF_INET6) {
        bytes = (const unsigned char *)&((const struct sockaddr_in6 *)source)->sin6_addr;
        family = 6;
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(bytes, mapped, 12) == 0) {  // ::ffff:a.b.c.d is the IPv4 sender a.b.c.d
            bytes += 12;
            family = 4;
        }
    } else {
        *high = 0;
        *low = 0;
        return 0;
    }
    unsigned length = family == 4 ? 4 : 16;
    uint64_t words[2] = {0, 0};
    for (unsigned i = 0; i < length; i++) words[i / 8] |= (uint64_t)bytes[i] << (56 - 8 * (i % 8));
    *high = words[0];
    *low = words[1];
    return family;
}

int roomtap_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int roomtap_epoll_add(int epoll, int fd, uint64_t token) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = EPOLLIN | EPOLLRDHUP;
    event.data.u64 = token;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int roomtap_epoll_remove(int epoll, int fd) { return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL); }

int roomtap_epoll_wait(int epoll, uint64_t *tokens, uint8_t *hangups, int capacity, int timeout_ms) {
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    int ready = epoll_wait(epoll, events, capacity, timeout_ms);
    for (int i = 0; i < ready; i++) {
        tokens[i] = events[i].data.u64;
        hangups[i] = (events[i].events & (EPOLLHUP | EPOLLRDHUP)) != 0;
    }
    return ready;
}

int roomtap_eventfd_create(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int roomtap_eventfd_signal(int fd) { return eventfd_write(fd, 1); }

int roomtap_thread_set_name(unsigned long thread, const char *name) {
    return pthread_setname_np((pthread_t)thread, name);
}
