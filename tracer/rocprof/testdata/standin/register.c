/*
 * register.c — a stand-in for rocprofiler-register with rocprofiler-sdk
 * behind it, in one shared library, for the test of attaching rlktop's tool
 * library to a process that is already running
 * (scripts/rocprof-attach-standin.sh). A Python program that knows nothing
 * of rlktop loads it (RTLD_GLOBAL, as librocprofiler-register.so.0, so that
 * the tool's dlsym(RTLD_DEFAULT) finds the SDK functions of fakesdk.c) and
 * calls fake_round in a loop, as a HIP program dispatches kernels.
 *
 * rocprofiler_register_attach(environment_buffer, tool_lib_path) follows
 * rocprofiler-register's attach entry: only with the attachment available
 * (the real one needs ROCP_TOOL_ATTACH=1 from the program's start; here
 * that variable in the environment), else 9
 * (ROCP_REG_ATTACHMENT_NOT_AVAILABLE); a NULL tool path is 8
 * (ROCP_REG_INVALID_ARGUMENT). The buffer is a uint32 count of pairs, then
 * each name and value NUL-terminated; each pair is set in the environment.
 * Then the tool is loaded as rocprofiler-sdk loads one (dlopen,
 * rocprofiler_configure, initialize), told the kernel symbols, and records
 * flow. rocprofiler_register_detach() stops them. Records are placed only
 * while attached and the tool's context is started; each placed record is
 * a line of the manifest (kind|name|start|dur|corr|tid|device|stream|value),
 * as host.c writes it.
 */
#include "fakesdk.c"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int attached, attaches, detaches, attach_rc = -1;
static long placed, after_detach;
static rlk_rp_tool_configure_result_t *tool;
static uint64_t corr_next = 1, clock_ns = 1000000;
static char manifest_path[4096];

void fake_set_manifest(const char *path) { snprintf(manifest_path, sizeof manifest_path, "%s", path); }

int rocprofiler_register_attach(const char *environment_buffer, const char *tool_lib_path) {
	if (!tool_lib_path) return attach_rc = 8;
	const char *opt = getenv("ROCP_TOOL_ATTACH");
	if (!opt || strcmp(opt, "1") != 0) return attach_rc = 9;
	if (environment_buffer) {
		uint32_t n;
		memcpy(&n, environment_buffer, 4);
		const char *p = environment_buffer + 4;
		for (uint32_t i = 0; i < n; i++) {
			const char *name = p;
			p += strlen(name) + 1;
			const char *value = p;
			p += strlen(value) + 1;
			setenv(name, value, 1);
		}
	}
	pthread_mutex_lock(&mu);
	attaches++;
	if (!tool) {
		void *h = dlopen(tool_lib_path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "register stand-in: dlopen %s: %s\n", tool_lib_path, dlerror());
			pthread_mutex_unlock(&mu);
			return attach_rc = 6;
		}
		typedef rlk_rp_tool_configure_result_t *(*configure_fn)(uint32_t, const char *, uint32_t, rlk_rp_client_id_t *);
		configure_fn configure = (configure_fn)dlsym(h, "rocprofiler_configure");
		rlk_rp_client_id_t client = {NULL, 1};
		tool = configure ? configure(sdk_version, "0.5.0", 0, &client) : NULL;
		if (!tool || tool->initialize(NULL, tool->tool_data) != 0) {
			tool = NULL;
			pthread_mutex_unlock(&mu);
			return attach_rc = 1; /* ROCP_REG_NO_TOOLS */
		}
		for (uint64_t k = 1; k <= 3; k++) code_object(k, names[k], 2, 1);
	}
	if (!manifest) manifest = fopen(manifest_path, "a");
	attached = 1;
	pthread_mutex_unlock(&mu);
	return attach_rc = 0;
}

int rocprofiler_register_detach(void) {
	pthread_mutex_lock(&mu);
	int was = attached;
	attached = 0;
	if (was) {
		detaches++;
		if (manifest) fflush(manifest);
	}
	pthread_mutex_unlock(&mu);
	return was ? 0 : 1;
}

/* fake_round dispatches n kernels on agent A (as a step of a HIP program);
 * they are recorded and delivered only while attached and started. */
void fake_round(int step, int n) {
	pthread_mutex_lock(&mu);
	for (int i = 0; i < n; i++) {
		uint64_t start = clock_ns, end = start + 500 + (uint64_t)i, corr = corr_next++, kid = 1 + (uint64_t)(i % 3);
		clock_ns += 1000;
		if (!attached || !__atomic_load_n(&started, __ATOMIC_ACQUIRE)) {
			if (detaches) after_detach++;
			continue;
		}
		uint8_t *r = dispatch(184, corr, 7001, start, end, AGENT_A, 0x100, kid);
		deliver(&r, 1, 0);
		free(r);
		placed++;
		fprintf(manifest, "kernel|%s|%llu|%llu|%llu|7001|%d|0|%d\n", names[kid], (unsigned long long)start,
		        (unsigned long long)(end - start), (unsigned long long)corr, agent_dev(AGENT_A), step);
	}
	if (manifest) fflush(manifest);
	pthread_mutex_unlock(&mu);
}

/* fake_summary writes key=value lines to path. */
void fake_summary(const char *path) {
	FILE *f = fopen(path, "w");
	if (!f) return;
	pthread_mutex_lock(&mu);
	fprintf(f, "attach_rc=%d\nattaches=%d\ndetaches=%d\nattached=%d\nplaced=%ld\nafter_detach=%ld\nstarted=%d\n", attach_rc,
	        attaches, detaches, attached, placed, after_detach, __atomic_load_n(&started, __ATOMIC_ACQUIRE));
	pthread_mutex_unlock(&mu);
	fclose(f);
}
