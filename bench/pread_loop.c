/*
 * The limit: a tight loop of pread(2) at random 4 KiB offsets of a file,
 * in the order of fio's random map (blockmap.h).
 * iolab's psync engine is measured against it.
 *
 * "timed" times each read as iolab's synchronous fast path does: a clock
 * read just before pread and one just after it, the difference kept. The
 * clock is iolab's (crates/engine/src/clock.rs): the CPU's time stamp
 * counter where /proc/cpuinfo says it is invariant (constant_tsc and
 * nonstop_tsc), calibrated over 20 ms slept against CLOCK_MONOTONIC and
 * turned into nanoseconds by the same fixed-point multiply;
 * CLOCK_MONOTONIC (clock_gettime) otherwise. iolab must time every I/O
 * (clat, its histogram), so this is the fair limit for it. Without "timed" the loop
 * reads no clock per I/O (it checks the time every 1024 reads): what the
 * kernel alone allows, printed beside the timed figure.
 * "direct" makes the reads O_DIRECT and times each the same way: the
 * device's own latency, for the tools' clat percentiles to be read
 * against.
 *
 *   cc -O2 -o pread_loop pread_loop.c
 *   ./pread_loop FILE SECONDS          -> "iops N"
 *   ./pread_loop FILE SECONDS timed    -> "iops N p50 US p99 US"
 *   ./pread_loop FILE SECONDS direct   -> "iops N p50 US p99 US"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blockmap.h"
#include "log2hist.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* iolab's clock: TSC ticks (or CLOCK_MONOTONIC ns), and ns per tick << 32. */
static int use_tsc;
static uint64_t mult = 1ULL << 32;

static inline uint64_t ticks(void)
{
#if defined(__x86_64__)
	if (use_tsc)
		return __builtin_ia32_rdtsc();
#endif
	return mono_ns();
}

static inline uint64_t ns_between(uint64_t t0, uint64_t t1)
{
	return t1 > t0 ? (uint64_t)(((unsigned __int128)(t1 - t0) * mult) >> 32) : 0;
}

static int has_flag(const char *line, const char *flag)
{
	size_t n = strlen(flag);
	for (const char *p = line; (p = strstr(p, flag)); p += n)
		if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n' || p[n] == 0))
			return 1;
	return 0;
}

/* As iolab's Clock::calibrate. */
static void calibrate(void)
{
#if defined(__x86_64__)
	char line[8192];
	int invariant = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f)) {
		if (!strncmp(line, "flags", 5)) {
			invariant = has_flag(line, "constant_tsc") && has_flag(line, "nonstop_tsc");
			break;
		}
	}
	if (f)
		fclose(f);
	if (!invariant)
		return;
	uint64_t n0 = mono_ns(), c0 = __builtin_ia32_rdtsc(), n1;
	/* Slept, as iolab does: the counter runs on while the thread sleeps. */
	struct timespec nap = { 0, 20000000 };
	while (nanosleep(&nap, &nap))
		;
	n1 = mono_ns();
	uint64_t c1 = __builtin_ia32_rdtsc();
	if (c1 == c0)
		return;
	mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (c1 - c0));
	use_tsc = 1;
#endif
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Each read timed from just before pread to just after it. "timed" keeps
 * each time in a log2 histogram as the queued loops do (iolab records
 * every I/O into fio's histogram); "direct", at a device's few tens of
 * thousands of reads per second, keeps every time and sorts them for
 * exact percentiles. Nothing after the loop may cost what the loop is
 * measured against: a sort of millions of times would count in the
 * process's CPU time, which the per-core figures divide by.
 */
static int timed(int fd, uint64_t blocks, double secs, char *buf, int exact)
{
	size_t cap = exact ? 1 << 24 : 0, n = 0;
	uint64_t *lat = exact ? malloc(cap * sizeof(*lat)) : NULL;
	uint64_t hist[64] = { 0 };
	struct blockmap map;
	if (blockmap_init(&map, blocks))
		return 1;
	calibrate();
	uint64_t start = ticks(), t1 = start;
	uint64_t dur = (uint64_t)(secs * 1e9);
	if (exact && !lat)
		return 1;
	while ((!exact || n < cap) && ns_between(start, t1) < dur) {
		uint64_t b = blockmap_next(&map);
		uint64_t t0 = ticks();
		if (pread(fd, buf, 4096, (off_t)(b * 4096)) != 4096) {
			perror("pread");
			return 1;
		}
		t1 = ticks();
		uint64_t ns = ns_between(t0, t1);
		if (exact)
			lat[n] = ns;
		else
			log2_count(hist, ns);
		n++;
	}
	double p50, p99;
	if (exact) {
		qsort(lat, n, sizeof(*lat), cmp_u64);
		p50 = lat[n / 2] / 1e3;
		p99 = lat[n * 99 / 100] / 1e3;
	} else {
		p50 = log2_pct(hist, n, 50) / 1e3;
		p99 = log2_pct(hist, n, 99) / 1e3;
	}
	printf("iops %.0f p50 %.1f p99 %.1f\n", n / (ns_between(start, t1) / 1e9), p50, p99);
	return 0;
}

int main(int argc, char **argv)
{
	int direct = argc == 4 && !strcmp(argv[3], "direct");
	int is_timed = direct || (argc == 4 && !strcmp(argv[3], "timed"));
	if (argc != 3 && !is_timed) {
		fprintf(stderr, "usage: %s FILE SECONDS [timed|direct]\n", argv[0]);
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
	if (!blocks) {
		fprintf(stderr, "%s: smaller than one block\n", argv[1]);
		return 1;
	}
	double secs = atof(argv[2]);
	char *buf = aligned_alloc(4096, 4096);
	if (is_timed)
		return timed(fd, blocks, secs, buf, direct);
	struct blockmap map;
	if (blockmap_init(&map, blocks))
		return 1;
	uint64_t n = 0;
	uint64_t start = mono_ns(), end = start + (uint64_t)(secs * 1e9), t;
	for (;;) {
		/* Check the clock every 1024 reads: the loop stays syscall-bound. */
		for (int i = 0; i < 1024; i++) {
			if (pread(fd, buf, 4096, (off_t)(blockmap_next(&map) * 4096)) != 4096) {
				perror("pread");
				return 1;
			}
		}
		n += 1024;
		if ((t = mono_ns()) >= end)
			break;
	}
	printf("iops %.0f\n", n / ((t - start) / 1e9));
	return 0;
}
