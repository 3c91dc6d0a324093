/*
 * The limit for io_uring: 4 KiB reads at random offsets of a file (in
 * the order of fio's random map, blockmap.h), kept
 * DEPTH deep, with nothing but what the work needs. It batches as iolab's
 * queued path does with fio's default settings: each read is submitted by
 * its own io_uring_enter as it is queued, one completion is reaped at a
 * time, and its slot is refilled at once. Each read is timed as iolab
 * times each I/O of a queued engine, with fio's slat: a clock read when it
 * is queued, one when it has been submitted and one when it is reaped,
 * its lat, slat and clat each into a log2 histogram. The ring is set up
 * as iolab sets up its rings (deferred task work for a single issuer,
 * falling back on older kernels), its descriptor is registered, the file
 * is registered, and with "direct" the reads are O_DIRECT into registered
 * buffers (READ_FIXED). A file that takes no nonblocking I/O (a read
 * with RWF_NOWAIT says EOPNOTSUPP: zram, tmpfs) gets its reads marked
 * IOSQE_ASYNC, as iolab marks them: io_uring then hands them to its
 * workers without a try that must fail, and to several at once.
 *
 *   cc -O2 -o uring_loop uring_loop.c
 *   ./uring_loop FILE SECONDS DEPTH [direct]
 *     -> "iops N p50 US p99 US slat_p50 US clat_p50 US" (p50, p99: lat)
 *
 * Raw system calls only: no liburing, so that nothing stands between the
 * loop and the kernel's interface.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "blockmap.h"
#include "log2hist.h"

#define BS 4096

struct ring {
	int fd;
	unsigned enter_fd; /* the registered index, or the descriptor */
	unsigned enter_flags;
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int enter(struct ring *r, unsigned submit, unsigned wait)
{
	unsigned flags = r->enter_flags | (wait ? IORING_ENTER_GETEVENTS : 0);
	for (;;) {
		long n = syscall(SYS_io_uring_enter, r->enter_fd, submit, wait, flags, NULL, 0);
		if (n >= 0)
			return (int)n;
		if (errno == EINTR)
			continue;
		perror("io_uring_enter");
		exit(1);
	}
}

static int setup(struct ring *r, unsigned depth)
{
	unsigned wanted[] = {
		IORING_SETUP_CLAMP | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN |
			IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_CLAMP | IORING_SETUP_SUBMIT_ALL,
		IORING_SETUP_CLAMP,
	};
	struct io_uring_params p;
	for (unsigned i = 0; i < 3; i++) {
		memset(&p, 0, sizeof(p));
		p.flags = wanted[i];
		r->fd = (int)syscall(SYS_io_uring_setup, depth, &p);
		if (r->fd >= 0)
			break;
	}
	if (r->fd < 0) {
		perror("io_uring_setup");
		return 1;
	}
	size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_len = cq_len = sq_len > cq_len ? sq_len : cq_len;
	char *sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
			IORING_OFF_SQ_RING);
	char *cq = sq;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP))
		cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
			  IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	r->sq_head = (unsigned *)(sq + p.sq_off.head);
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	/* The ring's own descriptor, registered: io_uring_enter skips fdget. */
	struct io_uring_rsrc_update up = { .offset = -1U, .data = (uint64_t)r->fd };
	r->enter_fd = r->fd;
	r->enter_flags = 0;
	if (syscall(SYS_io_uring_register, r->fd, IORING_REGISTER_RING_FDS, &up, 1) == 1) {
		r->enter_fd = up.offset;
		r->enter_flags = IORING_ENTER_REGISTERED_RING;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int direct = argc == 5 && argv[4][0] == 'd';
	if (argc != 4 && !direct) {
		fprintf(stderr, "usage: %s FILE SECONDS DEPTH [direct]\n", argv[0]);
		return 2;
	}
	unsigned depth = (unsigned)atoi(argv[3]);
	double secs = atof(argv[2]);
	if (depth == 0 || depth > 4096 || secs <= 0) {
		fprintf(stderr, "DEPTH must be 1 to 4096 and SECONDS positive\n");
		return 2;
	}
	/* A device is read without access times, as fio and iolab open it. */
	struct stat st;
	int flags = O_RDONLY | (direct ? O_DIRECT : 0);
	if (stat(argv[1], &st) == 0 && !S_ISREG(st.st_mode))
		flags |= O_NOATIME;
	int fd = open(argv[1], flags);
	if (fd < 0 && errno == EPERM && (flags & O_NOATIME))
		fd = open(argv[1], flags & ~O_NOATIME);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	/* The end by lseek: a block device's st_size is 0. */
	off_t size = lseek(fd, 0, SEEK_END);
	uint64_t blocks = size > 0 ? (uint64_t)size / BS : 0;
	if (blocks == 0) {
		fprintf(stderr, "%s: smaller than one block\n", argv[1]);
		return 1;
	}
	/* Past any end: no data moves, only the RWF_NOWAIT check answers. */
	char probe[512];
	struct iovec piov = { probe, sizeof(probe) };
	unsigned char sqe_flags = IOSQE_FIXED_FILE;
	if (preadv2(fd, &piov, 1, (off_t)1 << 60, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP)
		sqe_flags |= IOSQE_ASYNC;
	struct ring r;
	if (setup(&r, depth))
		return 1;
	if (syscall(SYS_io_uring_register, r.fd, IORING_REGISTER_FILES, &fd, 1) < 0) {
		perror("IORING_REGISTER_FILES");
		return 1;
	}
	char *bufs = aligned_alloc(BS, (size_t)depth * BS);
	struct iovec *iov = calloc(depth, sizeof(*iov));
	uint64_t *issued = calloc(depth, sizeof(*issued));
	unsigned *free_slots = calloc(depth, sizeof(*free_slots));
	if (!bufs || !iov || !issued || !free_slots)
		return 1;
	for (unsigned i = 0; i < depth; i++) {
		iov[i] = (struct iovec){ bufs + (size_t)i * BS, BS };
		free_slots[i] = i;
	}
	if (direct && syscall(SYS_io_uring_register, r.fd, IORING_REGISTER_BUFFERS, iov, depth) < 0) {
		perror("IORING_REGISTER_BUFFERS");
		return 1;
	}
	uint64_t *submitted = calloc(depth, sizeof(*submitted));
	if (!submitted)
		return 1;
	/* log2 histograms of lat (the percentiles printed), slat and clat. */
	uint64_t hist[64] = { 0 }, hist_s[64] = { 0 }, hist_c[64] = { 0 };
	uint64_t n = 0;
	struct blockmap map;
	if (blockmap_init(&map, blocks))
		return 1;
	unsigned nfree = depth, inflight = 0;
	uint64_t start = now_ns(), end = start + (uint64_t)(secs * 1e9), t = start;
	while (t < end || inflight) {
		if (nfree && t < end) {
			unsigned slot = free_slots[--nfree];
			unsigned tail = *r.sq_tail, idx = tail & *r.sq_mask;
			struct io_uring_sqe *sqe = &r.sqes[idx];
			memset(sqe, 0, sizeof(*sqe));
			sqe->opcode = direct ? IORING_OP_READ_FIXED : IORING_OP_READ;
			sqe->flags = sqe_flags;
			sqe->fd = 0;
			sqe->off = blockmap_next(&map) * BS;
			sqe->addr = (uint64_t)(uintptr_t)iov[slot].iov_base;
			sqe->len = BS;
			sqe->buf_index = (uint16_t)slot;
			sqe->user_data = slot;
			r.sq_array[idx] = idx;
			issued[slot] = now_ns();
			atomic_store_explicit((_Atomic unsigned *)r.sq_tail, tail + 1, memory_order_release);
			enter(&r, 1, 0);
			/* Submitted: slat's end and clat's start, as iolab reads
			 * the clock after each submission. */
			submitted[slot] = now_ns();
			log2_count(hist_s, submitted[slot] - issued[slot]);
			inflight++;
			if (nfree)
				continue;
		}
		/* Reap one completion; wait for it if there is none yet. */
		unsigned head = *r.cq_head;
		while (head == atomic_load_explicit((_Atomic unsigned *)r.cq_tail, memory_order_acquire)) {
			enter(&r, 0, 1);
		}
		struct io_uring_cqe *cqe = &r.cqes[head & *r.cq_mask];
		if (cqe->res != BS) {
			fprintf(stderr, "read: %s\n", cqe->res < 0 ? strerror(-cqe->res) : "short");
			return 1;
		}
		unsigned slot = (unsigned)cqe->user_data;
		atomic_store_explicit((_Atomic unsigned *)r.cq_head, head + 1, memory_order_release);
		t = now_ns();
		uint64_t lat = t - issued[slot];
		log2_count(hist, lat);
		log2_count(hist_c, t - submitted[slot]);
		free_slots[nfree++] = slot;
		inflight--;
		n++;
	}
	uint64_t p50 = log2_pct(hist, n, 50), p99 = log2_pct(hist, n, 99);
	uint64_t s50 = log2_pct(hist_s, n, 50), c50 = log2_pct(hist_c, n, 50);
	printf("iops %.0f p50 %.1f p99 %.1f slat_p50 %.1f clat_p50 %.1f\n", n / ((t - start) / 1e9),
	       p50 / 1e3, p99 / 1e3, s50 / 1e3, c50 / 1e3);
	return 0;
}
