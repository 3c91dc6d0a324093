/*
 * The limit for libaio: 4 KiB reads at random offsets of a file (in the
 * order of fio's random map, blockmap.h), kept
 * DEPTH deep through Linux AIO, with nothing but what the work needs. It
 * batches as iolab's queued path does with fio's default settings: each
 * read goes to the kernel by its own io_submit as it is queued, one
 * completion is reaped at a time and its slot refilled at once.
 * Completions are read from the ring the kernel maps at the context's
 * address, io_getevents is called only to wait, as iolab does (fio with
 * userspace_reap). Each read is timed as iolab times each I/O of a queued
 * engine, with fio's slat: a clock read when it is queued, one when it
 * has been submitted and one when it is reaped, its lat, slat and clat
 * each into a log2 histogram.
 *
 *   cc -O2 -o aio_loop aio_loop.c
 *   ./aio_loop FILE SECONDS DEPTH [direct]
 *     -> "iops N p50 US p99 US slat_p50 US clat_p50 US" (p50, p99: lat)
 *
 * The percentiles are the upper bounds of log2 buckets: coarse, for a
 * sanity check, not for comparison. Raw system calls only: no libaio.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blockmap.h"
#include "log2hist.h"

#define BS 4096
#define AIO_RING_MAGIC 0xa10a10a1

/* The header of the completion ring the kernel maps at the context. */
struct aio_ring {
	unsigned id, nr;
	_Atomic unsigned head, tail;
	unsigned magic, compat_features, incompat_features, header_length;
	struct io_event events[];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
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
	aio_context_t ctx = 0;
	if (syscall(SYS_io_setup, depth, &ctx) < 0) {
		perror("io_setup");
		return 1;
	}
	struct aio_ring *ring = (struct aio_ring *)ctx;
	if (ring->magic != AIO_RING_MAGIC || ring->incompat_features != 0 ||
	    ring->header_length != sizeof(struct aio_ring)) {
		fprintf(stderr, "the kernel's AIO ring is not laid out as expected\n");
		return 1;
	}
	char *bufs = aligned_alloc(BS, (size_t)depth * BS);
	struct iocb *cbs = calloc(depth, sizeof(*cbs));
	uint64_t *issued = calloc(depth, sizeof(*issued));
	unsigned *free_slots = calloc(depth, sizeof(*free_slots));
	if (!bufs || !cbs || !issued || !free_slots)
		return 1;
	for (unsigned i = 0; i < depth; i++)
		free_slots[i] = i;
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
			struct iocb *cb = &cbs[slot];
			cb->aio_data = slot;
			cb->aio_lio_opcode = IOCB_CMD_PREAD;
			cb->aio_fildes = (uint32_t)fd;
			cb->aio_buf = (uint64_t)(uintptr_t)(bufs + (size_t)slot * BS);
			cb->aio_nbytes = BS;
			cb->aio_offset = (int64_t)(blockmap_next(&map) * BS);
			issued[slot] = now_ns();
			while (syscall(SYS_io_submit, ctx, 1L, &cb) != 1) {
				if (errno != EINTR && errno != EAGAIN) {
					perror("io_submit");
					return 1;
				}
			}
			/* Submitted: slat's end and clat's start, as iolab reads
			 * the clock after each submission. */
			submitted[slot] = now_ns();
			log2_count(hist_s, submitted[slot] - issued[slot]);
			inflight++;
			if (nfree)
				continue;
		}
		/* Reap one completion from the ring; when it is empty, wait in
		 * io_getevents, which hands over the event itself. */
		struct io_event ev;
		unsigned head = atomic_load_explicit(&ring->head, memory_order_relaxed);
		if (head != atomic_load_explicit(&ring->tail, memory_order_acquire)) {
			ev = ring->events[head % ring->nr];
			atomic_store_explicit(&ring->head, (head + 1) % ring->nr, memory_order_release);
		} else {
			while (syscall(SYS_io_getevents, ctx, 1L, 1L, &ev, NULL) != 1) {
				if (errno != EINTR) {
					perror("io_getevents");
					return 1;
				}
			}
		}
		if (ev.res != BS) {
			fprintf(stderr, "read: %s\n", ev.res < 0 ? strerror((int)-ev.res) : "short");
			return 1;
		}
		unsigned slot = (unsigned)ev.data;
		t = now_ns();
		log2_count(hist, t - issued[slot]);
		log2_count(hist_c, t - submitted[slot]);
		free_slots[nfree++] = slot;
		inflight--;
		n++;
	}
	uint64_t p50 = log2_pct(hist, n, 50), p99 = log2_pct(hist, n, 99);
	uint64_t s50 = log2_pct(hist_s, n, 50), c50 = log2_pct(hist_c, n, 50);
	printf("iops %.0f p50 %.1f p99 %.1f slat_p50 %.1f clat_p50 %.1f\n", n / ((t - start) / 1e9),
	       p50 / 1e3, p99 / 1e3, s50 / 1e3, c50 / 1e3);
	syscall(SYS_io_destroy, ctx);
	return 0;
}
