/* Placeholder until the policy engine lands. */
#include "policy.h"
