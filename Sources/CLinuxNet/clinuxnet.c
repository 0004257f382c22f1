// See include/clinuxnet.h.
#define _GNU_SOURCE
#include "clinuxnet.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

struct roomtap_recv_batch {
    unsigned count;
    unsigned size;
    unsigned char *storage;
    struct iovec *iovecs;
    struct mmsghdr *headers;
};

roomtap_recv_batch *roomtap_recv_batch_create(unsigned count, unsigned size) {
    roomtap_recv_batch *batch = calloc(1, sizeof *batch);
    if (batch == NULL) return NULL;
    batch->count = count;
    batch->size = size;
    batch->storage = malloc((size_t)count * size);
    batch->iovecs = calloc(count, sizeof *batch->iovecs);
    batch->headers = calloc(count, sizeof *batch->headers);
    if (batch->storage == NULL || batch->iovecs == NULL || batch->headers == NULL) {
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
    free(batch);
}

int roomtap_recv_batch_read(roomtap_recv_batch *batch, int fd) {
    // No source addresses and no control data: the kernel writes only msg_len and msg_flags.
    return recvmmsg(fd, batch->headers, batch->count, MSG_DONTWAIT, NULL);
}

const void *roomtap_recv_batch_datagram(const roomtap_recv_batch *batch, unsigned k, unsigned *length) {
    *length = batch->headers[k].msg_len;
    return batch->iovecs[k].iov_base;
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
