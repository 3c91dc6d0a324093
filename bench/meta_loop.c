/*
 * The limit for `iolab meta`: create, stat and unlink N empty files in one
 * directory, each as its own pass over all files (as iolab's phases are),
 * with the same system calls relative to a directory descriptor
 * (openat O_CREAT|O_EXCL + close, fstatat, unlinkat) and no statistics.
 *
 *   cc -O2 -o meta_loop meta_loop.c
 *   ./meta_loop DIR N      -> prints "ops_per_sec X" over the 3*N operations
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *name)
{
	perror(name);
	fprintf(stderr, "meta_loop: %s failed\n", what);
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s DIR N\n", argv[0]);
		return 2;
	}
	long n = atol(argv[2]);
	int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (dir < 0 || n <= 0)
		die("open of the directory", argv[1]);
	char name[32];
	struct stat st;

	double t0 = now();
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%ld", i);
		int fd = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0 || close(fd) != 0)
			die("create", name);
	}
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%ld", i);
		if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			die("stat", name);
	}
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%ld", i);
		if (unlinkat(dir, name, 0) != 0)
			die("unlink", name);
	}
	double t = now() - t0;
	printf("ops_per_sec %.0f\n", 3.0 * n / t);
	return 0;
}
