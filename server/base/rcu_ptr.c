/*
 * rcu_ptr: the grace-period marker of TSan builds (see percore/rcu_ptr.h);
 * nothing in other builds.
 */
#include "percore/rcu_ptr.h"

#ifdef PERCORE_SANITIZE_THREAD
char rcu_ptr_grace_marker;
#endif
