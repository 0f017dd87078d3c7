/* Inside usecase/: the steps of cf_recommend kept in files of their own. */
#ifndef CLOUDFIT_USECASE_RECOMMEND_INTERNAL_H
#define CLOUDFIT_USECASE_RECOMMEND_INTERNAL_H
#include "cloudfit/usecase/recommend.h"

/* The baseline (req->compare_to, else the history through req->db) and
 * the gates on out->advice's choice, into out (recommend_ci.c). */
cf_status cf_recommend_gates(const cf_recommend_request *req, cf_recommend_result *out);

#endif
