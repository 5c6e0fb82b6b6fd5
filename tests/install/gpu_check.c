/* Links like any user program (pkg-config) and asks for the CUDA backend:
 * prints sm_runner_create's status and message, so that the test can check
 * how a static or shared program without the CUDA toolkit behaves. */
#include <stdio.h>
#include <seqmatch.h>

static int ignore(const sm_hit *hit, void *ctx) {
    (void)hit, (void)ctx;
    return 0;
}

int main(void) {
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.engine = SM_ENGINE_AUTOMATON;
    sm_pattern p = {"EcoRI", "GAATTC", 6};
    sm_db *db;
    sm_error err;
    if (sm_compile(&p, 1, &o, &db, &err) != SM_OK) return 1;
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.backend = SM_BACKEND_CUDA;
    ro.on_hit = ignore;
    sm_runner *r = NULL;
    int rc = sm_runner_create(db, &ro, &r, &err);
    printf("%d %d %s\n", sm_cuda_device_count(), rc, rc == SM_OK ? "ok" : err.message);
    sm_runner_free(r);
    sm_db_free(db);
    return 0;
}
