// Linux calls that Swift's Glibc module leaves out (epoll, eventfd, recvmmsg and
// pthread_setname_np need _GNU_SOURCE or headers it does not export), for RTPReceiver's one
// receive thread. Only plain C types cross this header: a module that included the system headers
// here would take over their declarations from Glibc for every Swift file of the importing target.
#ifndef ROOMTAP_CLINUXNET_H
#define ROOMTAP_CLINUXNET_H
#include <stdint.h>

/// A batch of `count` datagram buffers of `size` bytes each with their recvmmsg headers, allocated
/// once. Opaque.
typedef struct roomtap_recv_batch roomtap_recv_batch;

/// Allocates a batch (NULL when out of memory).
roomtap_recv_batch *roomtap_recv_batch_create(unsigned count, unsigned size);
/// Frees a batch. NULL is fine.
void roomtap_recv_batch_destroy(roomtap_recv_batch *batch);
/// recvmmsg(fd, MSG_DONTWAIT) into the batch: the number of datagrams read (0...count), or -1 with
/// errno set (EAGAIN when none was queued). A datagram longer than `size` is cut to `size` bytes.
int roomtap_recv_batch_read(roomtap_recv_batch *batch, int fd);
/// Datagram `k` of the last read: its bytes, and its length in `*length` (at most `size`).
const void *roomtap_recv_batch_datagram(const roomtap_recv_batch *batch, unsigned k, unsigned *length);
/// When datagram `k` of the last read reached the socket, CLOCK_MONOTONIC nanoseconds: the
/// kernel's receive time (SO_TIMESTAMPNS, CLOCK_REALTIME mapped to CLOCK_MONOTONIC at the read),
/// so it does not depend on when the receive thread got to run; the read's own time when the
/// socket gives none (timestamps not enabled) or the wall clock stepped.
uint64_t roomtap_recv_batch_arrival(const roomtap_recv_batch *batch, unsigned k);
/// The source address of datagram `k` of the last read, as two big-endian words (`*high` holds
/// bytes 0-7, `*low` bytes 8-15; an IPv4 address, or an IPv4-mapped IPv6 one, in the top 32 bits of
/// `*high`): 4 for IPv4, 6 for IPv6, 0 when the kernel gave none.
int roomtap_recv_batch_source(const roomtap_recv_batch *batch, unsigned k, uint64_t *high, uint64_t *low);
/// Asks the kernel to timestamp every datagram `fd` receives (SO_TIMESTAMPNS). 0, or -1 with errno.
int roomtap_socket_enable_timestamps(int fd);

/// epoll_create1(EPOLL_CLOEXEC): a descriptor, or -1 with errno set.
int roomtap_epoll_create(void);
/// Watches `fd` for input and hang-ups (level-triggered), reported with `token`. 0, or -1 with errno.
int roomtap_epoll_add(int epoll, int fd, uint64_t token);
/// Stops watching `fd`. 0, or -1 with errno.
int roomtap_epoll_remove(int epoll, int fd);
/// epoll_wait for up to `capacity` (at most 64) events, `timeout_ms` (-1: no limit): the number
/// of events, each as its token and whether it is a hang-up (EPOLLHUP or EPOLLRDHUP: the socket
/// was shut down), or -1 with errno set.
int roomtap_epoll_wait(int epoll, uint64_t *tokens, uint8_t *hangups, int capacity, int timeout_ms);

/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK): a descriptor, or -1 with errno set.
int roomtap_eventfd_create(void);
/// Adds 1 to the eventfd (wakes a wait on it). 0, or -1 with errno.
int roomtap_eventfd_signal(int fd);

/// pthread_setname_np: names `thread` (a pthread_t) for the kernel (/proc/self/task/*/comm, at
/// most 15 bytes). 0 or an error number.
int roomtap_thread_set_name(unsigned long thread, const char *name);
/// Starts `path` with `argv` (NULL-terminated) and `envp` in a child process of its own process
/// group whose stdin is /dev/null and stdout and stderr are `output_fd` (opened by the caller,
/// e.g. a log file), with every other descriptor closed, and which gets `death_signal` when the
/// *thread* that called this ends (PR_SET_PDEATHSIG: a room's recorder dies with its worker, so a
/// dead worker never leaves a room recording without a lease). The child's pid, or -1 with errno.
/// Between fork and exec the child calls only async-signal-safe functions.
int roomtap_spawn(const char *path, char *const argv[], char *const envp[], int output_fd, int death_signal);

/// Flushes C stdio's stdout (where Swift's print writes) and says whether any of what was
/// written to it failed, now or earlier: 0, the errno of a failure now, or -1 when an earlier
/// write failed (stdio keeps no errno for it). As coreutils' close_stdout.
int roomtap_flush_stdout(void);

#endif
