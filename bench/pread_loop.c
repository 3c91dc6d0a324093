/*
 * The limit: a tight loop of pread(2) at random 4 KiB offsets of a file,
 * with no statistics at all. iolab's psync engine is measured against it.
 * With "direct", the reads are O_DIRECT and each is timed: the device's
 * own latency, for the tools' clat percentiles to be read against.
 *
 *   cc -O2 -o pread_loop pread_loop.c
 *   ./pread_loop FILE SECONDS          -> prints "iops N"
 *   ./pread_loop FILE SECONDS direct   -> prints "iops N p50 US p99 US"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* O_DIRECT reads, each timed from just before pread to just after it. */
static int timed(int fd, uint64_t blocks, double secs, char *buf)
{
	size_t cap = 1 << 24, n = 0;
	uint64_t *lat = malloc(cap * sizeof(*lat));
	uint64_t x = 88172645463325252ULL;
	uint64_t start = now_ns(), end = start + (uint64_t)(secs * 1e9), t1 = start;
	if (!lat)
		return 1;
	while (n < cap && t1 < end) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t t0 = now_ns();
		if (pread(fd, buf, 4096, (off_t)((x % blocks) * 4096)) != 4096) {
			perror("pread");
			return 1;
		}
		t1 = now_ns();
		lat[n++] = t1 - t0;
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	printf("iops %.0f p50 %.1f p99 %.1f\n", n / ((t1 - start) / 1e9),
	       lat[n / 2] / 1e3, lat[n * 99 / 100] / 1e3);
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int direct = argc == 4 && argv[3][0] == 'd';
	if (argc != 3 && !direct) {
		fprintf(stderr, "usage: %s FILE SECONDS [direct]\n", argv[0]);
		return 2;
	}
	int fd = open(argv[1], O_RDONLY | (direct ? O_DIRECT : 0));
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	struct stat st;
	fstat(fd, &st);
	uint64_t blocks = st.st_size / 4096;
	double secs = atof(argv[2]);
	char *buf = aligned_alloc(4096, 4096);
	if (direct)
		return timed(fd, blocks, secs, buf);
	uint64_t x = 88172645463325252ULL, n = 0;
	double start = now(), end = start + secs;
	for (;;) {
		/* Check the clock every 1024 reads: the loop stays syscall-bound. */
		for (int i = 0; i < 1024; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (pread(fd, buf, 4096, (off_t)((x % blocks) * 4096)) != 4096) {
				perror("pread");
				return 1;
			}
		}
		n += 1024;
		if (now() >= end)
			break;
	}
	printf("iops %.0f\n", n / (now() - start));
	return 0;
}
