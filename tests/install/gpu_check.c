/* Links like any user program (pkg-config) and asks for the CUDA backend:
 * prints sm_runner_create_with_params's status and message, so that the test can check
 * how a static or shared program without the CUDA toolkit behaves. */
#include <stdio.h>
#include <seqmatch.h>

static int ignore(const sm_hit *hit, void *ctx) {
    (void)hit, (void)ctx;
    return 0;
}

int main(void) {
    sm_compile_params *o = sm_compile_params_new();
    if (!o || sm_compile_params_set(o, SM_CPARAM_ENGINE, SM_ENGINE_AUTOMATON) != SM_OK) return 1;
    sm_pattern p = {"EcoRI", "GAATTC", 6};
    sm_db *db;
    sm_error err;
    int rc = sm_compile_with_params(&p, 1, o, &db, &err);
    sm_compile_params_free(o);
    if (rc != SM_OK) return 1;
    sm_runner_params *ro = sm_runner_params_new();
    if (!ro || sm_runner_params_set(ro, SM_RPARAM_BACKEND, SM_BACKEND_CUDA) != SM_OK) return 1;
    sm_runner_params_set_on_hit(ro, ignore);
    sm_runner *r = NULL;
    rc = sm_runner_create_with_params(db, ro, &r, &err);
    sm_runner_params_free(ro);
    printf("%d %d %s\n", sm_cuda_device_count(), rc, rc == SM_OK ? "ok" : err.message);
    sm_runner_free(r);
    sm_db_free(db);
    return 0;
}
