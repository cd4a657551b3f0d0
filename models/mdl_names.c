/* mdl_names.c -- the names of the models module's enums as the scenario
 * spells them (activations, learning-rate schedules, partition kinds,
 * feature scalings), one NULL-terminated list per enum, indexed by value.
 * It is data only; the model types' names are in their tables (mdl.c's
 * mdl_type_find).
 */
#include "mdl.h"
#include "mdl_optim.h"

#include <stddef.h>

const char *const mdl_activation_name_list[] = {
    [MDL_ACT_RELU] = "relu",
    [MDL_ACT_TANH] = "tanh",
    [MDL_ACT_TANH + 1] = NULL,
};

const char *const mdl_schedule_name_list[] = {
    [MDL_SCHED_CONSTANT] = "constant",
    [MDL_SCHED_STEP]     = "step",
    [MDL_SCHED_COSINE]   = "cosine",
    [MDL_SCHED_COSINE + 1] = NULL,
};

const char *const mdl_partition_kind_name_list[] = {
    [MDL_PART_IID]       = "iid",
    [MDL_PART_DIRICHLET] = "dirichlet",
    [MDL_PART_SHARDS]    = "shards",
    [MDL_PART_QUANTITY]  = "quantity",
    [MDL_PART_QUANTITY + 1] = NULL,
};

/* One line per partition for `dtsim list`, indexed alike. */
const char *const mdl_partition_kind_help_list[] = {
    [MDL_PART_IID]       = "a seeded shuffle dealt into equal blocks",
    [MDL_PART_DIRICHLET] = "label skew: per class, node shares from Dirichlet(alpha) (Hsu et al. 2019)",
    [MDL_PART_SHARDS]    = "label-sorted shards, shards_per_node of them per node (McMahan et al. 2017)",
    [MDL_PART_QUANTITY]  = "quantity skew: node shares proportional to Pareto(exponent) weights",
    [MDL_PART_QUANTITY + 1] = NULL,
};

const char *const mdl_scale_name_list[] = {
    [MDL_SCALE_NONE]     = "none",
    [MDL_SCALE_MINMAX]   = "minmax",
    [MDL_SCALE_STANDARD] = "standard",
    [MDL_SCALE_STANDARD + 1] = NULL,
};
