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

/* One line per name for `dtsim list`, indexed like the names (scn_keys.c
 * pairs them; a test checks that every name has one). */
const char *const scn_i_noise_help[] = {
    [CL_NOISE_CONSTANT] = "factor 1: every step takes its base time",
    [CL_NOISE_UNIFORM] = "U(low, high)",
    [CL_NOISE_EXPONENTIAL] = "Exp(1), mean 1: memoryless stragglers",
    [CL_NOISE_LOGNORMAL] = "LogNormal(-sigma^2/2, sigma), mean 1",
    [CL_NOISE_NORMAL] = "1 + N(0, sigma^2), redrawn below floor",
    [CL_NOISE_SHIFTED_EXPONENTIAL] = "shift + (1 - shift) Exp(1): never below shift",
    [CL_NOISE_GAMMA] = "Gamma(shape, 1/shape), mean 1, coefficient of variation 1/sqrt(shape)",
    [CL_NOISE_PARETO] = "Pareto(alpha, (alpha-1)/alpha), mean 1, heavy tail",
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

const char *const scn_i_discipline_help[] = {
    [CL_NIC_FIFO] = "a NIC serves one transfer at a time, in order",
    [CL_NIC_FAIR] = "max-min fair sharing of the sender's uplink and the receiver's downlink",
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

const char *const scn_i_data_kind_help[] = {
    [SCN_DATA_SYNTHETIC] = "a Gaussian mixture, class means ~ N(0, separation^2 I)",
    [SCN_DATA_IDX] = "four IDX files (MNIST format), gzipped or not",
    [SCN_DATA_FASHION_MNIST] = "Debian's dataset-fashion-mnist (IDX files in data.dir)",
    [SCN_DATA_LIBSVM] = "LIBSVM/svmlight text files",
    [SCN_DATA_CSV] = "CSV files, one sample a line, the label in label_column",
    [SCN_DATA_SYNTH_LOGISTIC] = "logistic labels from drawn true weights (known optimum)",
    [SCN_DATA_SYNTH_REGRESSION] = "regression targets from drawn true weights (known optimum)",
    [SCN_DATA_SYNTH_REGRESSION + 1] = NULL,
};

/* The default first, "none" last; every other name is a model type's
 * (mdl_type_find), which the loader checks. */
const char *const scn_i_model_names[] = {"softmax", "logistic", "mlp", "linear", "none", NULL};
const char *const scn_i_model_help[] = {
    "multinomial logistic regression, cross-entropy",
    "binary logistic regression, labels 0/1",
    "multilayer perceptron: hidden ReLU or tanh layers, softmax output",
    "least squares regression on real targets",
    "timing only: no parameters, messages of model.message_bytes, model.params x "
    "bytes_per_param or a model.profile",
    NULL,
};

/* The timing-only model's profiles (model.profile, docs/models.md): the
 * parameter count (message bytes = params x network.bytes_per_param) and
 * the forward FLOPs of one sample (2 per multiply-accumulate); a step
 * costs three forwards (backward ~ 2 x forward).  Sources: torchvision's
 * model cards (num_params, and GFLOPS, which count multiply-accumulates at
 * 224 x 224) for the CNNs; for the transformers the Hugging Face
 * checkpoints' parameter counts and Kaplan et al. 2020 (Table 1): forward
 * FLOPs per token 2 N + 2 n_layer n_ctx d_model, N = 12 n_layer d_model^2,
 * times the tokens of a sample (the embeddings and the output projection
 * left out, as there). */
const scn_model_profile scn_model_profiles[SCN_N_PROFILES] = {
    { "resnet18", 11689512, 2 * 1.81e9 },
    { "resnet50", 25557032, 2 * 4.09e9 },
    { "vgg16", 138357544, 2 * 15.47e9 },
    /* n_layer 12, d_model 768, 128 tokens: (2 * 84934656 + 2 * 12 * 128 * 768) * 128 */
    { "bert-base", 109482240, 22045261824.0 },
    /* n_layer 12, d_model 768, 1024 tokens: (2 * 84934656 + 2 * 12 * 1024 * 768) * 1024 */
    { "gpt2-small", 124439808, 193273528320.0 },
};
const char *const scn_i_profile_names[] = {"resnet18", "resnet50", "vgg16", "bert-base",
                                           "gpt2-small", NULL};
const char *const scn_i_profile_help[] = {
    "ResNet-18, 224x224 (He et al. 2016; torchvision): 11689512 parameters, 1.086e10 FLOPs "
    "per sample (3 x 3.62e9)",
    "ResNet-50, 224x224 (He et al. 2016; torchvision): 25557032 parameters, 2.454e10 FLOPs "
    "per sample (3 x 8.18e9)",
    "VGG-16, 224x224 (Simonyan and Zisserman 2015; torchvision): 138357544 parameters, "
    "9.282e10 FLOPs per sample (3 x 3.094e10)",
    "BERT-base, 128 tokens (Devlin et al. 2019; bert-base-uncased): 109482240 parameters, "
    "6.614e10 FLOPs per sample (3 x 2.205e10)",
    "GPT-2 small, 1024 tokens (Radford et al. 2019; gpt2): 124439808 parameters, 5.798e11 "
    "FLOPs per sample (3 x 1.933e11)",
    NULL,
};

int scn_data_generated(scn_data_kind k)
{
    return k == SCN_DATA_SYNTHETIC || k == SCN_DATA_SYNTH_LOGISTIC ||
           k == SCN_DATA_SYNTH_REGRESSION;
}
