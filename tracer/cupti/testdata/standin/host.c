/*
 * host.c — stands in for a CUDA program in rlktop's end-to-end test.
 *
 * Like a PyTorch process it has libcupti loaded before CUDA starts (dlopen
 * of FAKE_CUPTI, the stand-in), then loads the injection library the way
 * the CUDA driver does: dlopen($CUDA_INJECTION64_PATH) and a call of its
 * InitializeInjection (twice: the second must do nothing). Then it makes
 * "GPU activity" through the stand-in: rounds of launches from a second
 * thread, a fork() whose child emits too and exits, more rounds from the
 * main thread, and a last partial buffer that only the injection library's
 * forced flush at exit can deliver. It writes a summary (HOST_SUMMARY):
 * the longest round in ns (the host must never wait on rlktop) and the
 * stand-in's counters.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*round_fn)(int, int, int);
static round_fn fake_round;
static void (*fake_api_exit)(void);
static int rounds, kernels, markers;
static uint64_t max_round_ns, placed;

static uint64_t mono(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int env_int(const char *k, int d) {
	const char *s = getenv(k);
	return s && *s ? atoi(s) : d;
}

static void run_rounds(int from, int to) {
	for (int i = from; i < to; i++) {
		uint64_t t0 = mono();
		placed += (uint64_t)fake_round(i, kernels, markers);
		fake_api_exit();
		uint64_t d = mono() - t0;
		if (d > max_round_ns) max_round_ns = d;
		int gap = env_int("HOST_GAP_US", 0);
		if (gap) usleep((useconds_t)gap);
	}
}

static void *worker(void *arg) {
	(void)arg;
	run_rounds(0, rounds / 2);
	return NULL;
}

static void *must(void *p, const char *what) {
	if (!p) {
		fprintf(stderr, "host: %s: %s\n", what, dlerror());
		exit(3);
	}
	return p;
}

int main(void) {
	rounds = env_int("HOST_ROUNDS", 40);
	kernels = env_int("HOST_KERNELS", 4);
	markers = env_int("HOST_MARKERS", 1);
	void *fake = must(dlopen(getenv("FAKE_CUPTI"), RTLD_NOW | RTLD_GLOBAL), "dlopen FAKE_CUPTI");
	fake_round = (round_fn)must(dlsym(fake, "fake_round"), "fake_round");
	fake_api_exit = (void (*)(void))must(dlsym(fake, "fake_api_exit"), "fake_api_exit");
	void (*set_manifest)(const char *) = must(dlsym(fake, "fake_set_manifest"), "fake_set_manifest");
	void (*set_rpb)(size_t) = must(dlsym(fake, "fake_set_records_per_buffer"), "fake_set_records_per_buffer");
	void (*inject)(uint64_t) = must(dlsym(fake, "fake_inject_dropped"), "fake_inject_dropped");
	void (*summary)(FILE *) = must(dlsym(fake, "fake_summary"), "fake_summary");
	int (*flush_all)(uint32_t) = must(dlsym(fake, "cuptiActivityFlushAll"), "cuptiActivityFlushAll");
	void (*flush_manifest)(void) = must(dlsym(fake, "fake_flush_manifest"), "fake_flush_manifest");
	if (getenv("FAKE_MANIFEST")) set_manifest(getenv("FAKE_MANIFEST"));
	set_rpb((size_t)env_int("HOST_RECORDS_PER_BUFFER", 100));

	/* What the CUDA driver does with CUDA_INJECTION64_PATH. */
	uint64_t t_init = mono();
	void *inj = must(dlopen(getenv("CUDA_INJECTION64_PATH"), RTLD_NOW), "dlopen CUDA_INJECTION64_PATH");
	int (*init)(void) = (int (*)(void))must(dlsym(inj, "InitializeInjection"), "InitializeInjection");
	int r1 = init();
	int r2 = init();
	t_init = mono() - t_init;

	uint64_t t0 = mono();
	pthread_t th;
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	inject((uint64_t)env_int("HOST_DROPPED", 0));

	int child_status = -1;
	uint64_t child_ns = 0;
	if (env_int("HOST_FORK", 1)) {
		/* Like a DataLoader worker: fork, do some work, exit. Buffers are
		 * flushed first so that the child inherits none. */
		flush_all(0);
		flush_manifest(); /* the child must not write the parent's stdio buffer again */
		uint64_t f0 = mono();
		pid_t pid = fork();
		if (pid == 0) {
			fake_round(100000, kernels, markers); /* the library is inert here */
			exit(0);                             /* runs atexit handlers */
		}
		waitpid(pid, &child_status, 0);
		child_ns = mono() - f0;
	}
	run_rounds(rounds / 2, rounds);
	uint64_t total = mono() - t0;

	FILE *f = fopen(getenv("HOST_SUMMARY"), "w");
	if (!f) f = stdout;
	fprintf(f, "init_results=%d,%d\ninit_ns=%llu\nmax_round_ns=%llu\nrounds_ns=%llu\nplaced=%llu\nchild_status=%d\nchild_ns=%llu\n",
	        r1, r2, (unsigned long long)t_init, (unsigned long long)max_round_ns, (unsigned long long)total,
	        (unsigned long long)placed, child_status, (unsigned long long)child_ns);
	summary(f);
	fclose(f);
	return 0; /* exit: the injection library flushes (forced) and drains */
}
