/* scn_names.c -- the names the scenario gives to the enums of modules that
 * keep no name list of their own (the cluster's noise, slowdown, fault,
 * jitter, NIC and fault-policy enums) and to the scenario's own enums (data
 * kind, rejoin policy), plus the model kinds in the order the scenario lists
 * them.  Each list is NULL-terminated and indexed by the enum's value; the
 * validators look names up in them and the resolved text writes names back
 * from them, so both read one list.  Topology, model-module and schedule
 * names are their owners' (topo_*_name_list, mdl_*_name_list).
 */
#include "scn_internal.h"

const char *const scn_i_noise_names[] = {
    [CL_NOISE_CONSTANT] = "constant",
    [CL_NOISE_UNIFORM] = "uniform",
    [CL_NOISE_EXPONENTIAL] = "exponential",
    [CL_NOISE_LOGNORMAL] = "lognormal",
    [CL_NOISE_NORMAL] = "normal",
    [CL_NOISE_SHIFTED_EXPONENTIAL] = "shifted_exponential",
    [CL_NOISE_GAMMA] = "gamma",
    [CL_NOISE_PARETO] = "pareto",
    [CL_NOISE_PARETO + 1] = NULL,
};

const char *const scn_i_slow_kind_names[] = {
    [CL_SLOW_WINDOW] = "window",
    [CL_SLOW_MARKOV] = "markov",
    [CL_SLOW_PERIODIC] = "periodic",
    [CL_SLOW_TRACE] = "trace",
    [CL_SLOW_TRACE + 1] = NULL,
};

const char *const scn_i_fault_kind_names[] = {
    [CL_FAULT_SCHEDULE] = "schedule",
    [CL_FAULT_EXPONENTIAL] = "exponential",
    [CL_FAULT_TRACE] = "trace",
    [CL_FAULT_TRACE + 1] = NULL,
};

const char *const scn_i_jitter_names[] = {
    [CL_JITTER_NONE] = "none",
    [CL_JITTER_UNIFORM] = "uniform",
    [CL_JITTER_EXPONENTIAL] = "exponential",
    [CL_JITTER_EXPONENTIAL + 1] = NULL,
};

const char *const scn_i_discipline_names[] = {
    [CL_NIC_FIFO] = "fifo",
    [CL_NIC_FAIR] = "fair",
    [CL_NIC_FAIR + 1] = NULL,
};

const char *const scn_i_step_policy_names[] = {
    [CL_STEP_RESTART] = "restart",
    [CL_STEP_RESUME] = "resume",
    [CL_STEP_RESUME + 1] = NULL,
};

const char *const scn_i_msg_policy_names[] = {
    [CL_MSG_DROP] = "drop",
    [CL_MSG_KEEP_SENT] = "keep_sent",
    [CL_MSG_KEEP_SENT + 1] = NULL,
};

const char *const scn_i_rejoin_names[] = {
    [SCN_REJOIN_KEEP] = "keep",
    [SCN_REJOIN_NEIGHBOUR] = "neighbour",
    [SCN_REJOIN_NEIGHBOUR + 1] = NULL,
};

const char *const scn_i_data_kind_names[] = {
    [SCN_DATA_SYNTHETIC] = "synthetic",
    [SCN_DATA_IDX] = "idx",
    [SCN_DATA_FASHION_MNIST] = "fashion-mnist",
    [SCN_DATA_LIBSVM] = "libsvm",
    [SCN_DATA_CSV] = "csv",
    [SCN_DATA_SYNTH_LOGISTIC] = "synthetic-logistic",
    [SCN_DATA_SYNTH_REGRESSION] = "synthetic-regression",
    [SCN_DATA_SYNTH_REGRESSION + 1] = NULL,
};

/* The default first, "none" last; every other name is a model type's
 * (mdl_type_find), which the loader checks. */
const char *const scn_i_model_names[] = {"softmax", "logistic", "mlp", "linear", "none", NULL};

int scn_data_generated(scn_data_kind k)
{
    return k == SCN_DATA_SYNTHETIC || k == SCN_DATA_SYNTH_LOGISTIC ||
           k == SCN_DATA_SYNTH_REGRESSION;
}
