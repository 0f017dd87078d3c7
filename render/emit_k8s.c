/* --emit k8s: a Kubeflow Training Operator PyTorchJob (kubeflow.org/v1).
 * Each replica is a whole VM of the chosen type (node selector on the
 * labels the cloud's managed Kubernetes sets, all its GPUs under the device
 * plugin's resource name: nvidia.com/gpu, or amd.com/gpu for AMD), in an
 * image built for that GPU and CPU architecture (data/launch_images.csv),
 * torchrun as the command (the operator passes the PET_* rendezvous
 * settings).
 *
 * Node labels: only ones the node carries without anyone adding them.
 * kubernetes.io/arch is set by the kubelet on every node. The instance
 * type label node.kubernetes.io/instance-type is set by the cloud
 * provider's node controller on EKS, GKE and AKS with the cloud's own type
 * name. GKE also labels GPU nodes cloud.google.com/gke-accelerator with the
 * GPU type: an N1 host carries attached GPUs of any type, so the instance
 * type alone does not pick them. Lambda has no managed Kubernetes that
 * labels its instance types: no instance-type selector is written there;
 * --node-selector KEY=VALUE adds the user's own (any cloud).
 *
 * Shapes, following the operator's validating webhook
 * (pkg/webhooks/pytorch/pytorchjob_webhook.go, v1.9.0): on-demand and
 * single-node jobs have one Master and nodes-1 Workers; a multi-node spot
 * job is elastic: nodes Workers and an elasticPolicy (the webhook requires
 * a Worker spec whenever elasticPolicy is set, and the operator points the
 * rendezvous at worker 0). Spot pods select the cloud's spot node label
 * and tolerate the matching NoSchedule taint (AKS always taints spot
 * pools; GKE documents the same taint for spot pools; EKS has no default
 * taint, the toleration only matters where one was added). A mixed plan
 * (spot, then on demand near the deadline) is two jobs in one file: the
 * spot job, and the on-demand job created suspended (runPolicy.suspend),
 * which the switch-over resumes (docs/spot.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudfit/common/number.h"
#include "cloudfit/common/clock.h"
#include "cloudfit/render/emit_common.h"
#include "cloudfit/common/yaml_out.h"
#include "cloudfit/pricing.h"

/* The label (and taint) each managed Kubernetes service puts on spot nodes. */
static void spot_label(const char *cloud, const char **key, const char **value)
{
    *key = *value = NULL;
    if (strcmp(cloud, "aws") == 0) {
        *key = "eks.amazonaws.com/capacityType";
        *value = "SPOT";
    } else if (strcmp(cloud, "gcp") == 0) {
        *key = "cloud.google.com/gke-spot";
        *value = "true";
    } else if (strcmp(cloud, "azure") == 0) {
        *key = "kubernetes.azure.com/scalesetpriority";
        *value = "spot";
    }
}

/* Kubernetes expands $(VAR) in a container's command from its environment
 * and turns $$ into $; doubling every $ keeps each word literal. */
static void k8s_literal(cf_yaml_out *y, const char *word, cf_buf *scratch)
{
    scratch->len = 0;
    cf_buf_append(scratch, "", 0);
    for (const char *p = word; *p; p++)
        cf_buf_append(scratch, *p == '$' ? "$$" : p, *p == '$' ? 2 : 1);
    yo_str(y, cf_buf_cstr(scratch), 0);
}

/* The managed Kubernetes service of a cloud that labels its nodes with the
 * cloud's instance type (node.kubernetes.io/instance-type); NULL = none. */
static const char *managed_kubernetes(const char *cloud)
{
    if (strcmp(cloud, "aws") == 0)
        return "EKS";
    if (strcmp(cloud, "gcp") == 0)
        return "GKE";
    if (strcmp(cloud, "azure") == 0)
        return "AKS";
    return NULL;
}

/* A label selector KEY=VALUE as Kubernetes accepts it: the key an optional
 * DNS-subdomain prefix and "/" then a name of at most 63 characters
 * (alphanumerics, '-', '_', '.', alphanumeric at both ends), the value
 * empty or such a name. */
static int label_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && !((c == '-' || c == '_' || c == '.') && i > 0 && i + 1 < n))
            return 0;
    }
    return 1;
}

/* A DNS-1123 subdomain (Kubernetes' IsDNS1123Subdomain): labels of
 * [a-z0-9], '-' inside, joined by single dots, 253 characters at most. */
static int dns_subdomain_ok(const char *s, size_t n)
{
    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        int label_start = i == 0 || s[i - 1] == '.', label_end = i + 1 == n || s[i + 1] == '.';
        if (c == '.' ? label_start || label_end : !alnum && !(c == '-' && !label_start && !label_end))
            return 0;
    }
    return 1;
}

static cf_status check_selector(const char *selector)
{
    const char *eq = strchr(selector, '=');
    const char *slash = eq ? memchr(selector, '/', (size_t)(eq - selector)) : NULL;
    int ok = eq != NULL;
    if (ok && slash)
        ok = dns_subdomain_ok(selector, (size_t)(slash - selector)) &&
             label_name_ok(slash + 1, (size_t)(eq - slash - 1));
    else if (ok)
        ok = label_name_ok(selector, (size_t)(eq - selector));
    if (ok && eq[1])
        ok = label_name_ok(eq + 1, strlen(eq + 1));
    if (!ok) {
        cf_error_set(CF_ERR_USAGE, "option '--node-selector': '%s' is not a Kubernetes label selector KEY=VALUE",
                     selector);
        cf_error_hint("e.g. --node-selector lambda.ai/instance-type=gpu_1x_gh200 (a key of at most 63 characters, "
                      "optionally prefixed DOMAIN/ of dot-separated lower-case labels, and a value of letters, "
                      "digits, '-', '_', '.')");
        return CF_ERR_USAGE;
    }
    return CF_OK;
}

static size_t key_length(const char *selector) { return (size_t)(strchr(selector, '=') - selector); }

cf_status cf_emit_k8s_check_selectors(const char *const *selectors, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (check_selector(selectors[i]) != CF_OK)
            return CF_ERR_USAGE;
        size_t len = key_length(selectors[i]);
        for (size_t j = 0; j < i; j++)
            if (key_length(selectors[j]) == len && memcmp(selectors[i], selectors[j], len) == 0) {
                /* YAML's keys are unique: readers differ on a repeated one */
                cf_error_set(CF_ERR_USAGE, "option '--node-selector': the key '%.*s' is given twice ('%s', '%s')",
                             (int)len, selectors[i], selectors[j], selectors[i]);
                cf_error_hint("a node has one value per label: give each key once");
                return CF_ERR_USAGE;
            }
    }
    return CF_OK;
}

/* The user's --node-selector value for `key`, NULL when none names it. */
static const char *user_label(const cf_emit_k8s_options *k, const char *key)
{
    size_t len = strlen(key);
    for (size_t i = 0; i < k->n_node_selectors; i++)
        if (key_length(k->node_selectors[i]) == len && memcmp(k->node_selectors[i], key, len) == 0)
            return k->node_selectors[i] + len + 1;
    return NULL;
}

/* A label cloudfit writes, unless the user gave the key (then theirs, in
 * its place among the user's labels). */
static void own_label(cf_yaml_out *y, const cf_emit_k8s_options *k, const char *key, const char *value)
{
    if (!user_label(k, key))
        yo_kv_quoted(y, key, value);
}

typedef struct {
    const cf_report *r;
    const cf_shell_words *entry;
    const cf_emit_env_list *env;
    const cf_emit_accelerator *acc;
    const char *image;
    const cf_emit_k8s_options *k;
    int spot;              /* this job runs on spot VMs */
    const char *phase;     /* CLOUDFIT_PHASE of a mixed plan's job; "" = none */
    const char *deadline_at; /* CLOUDFIT_DEADLINE_AT of a mixed plan's pods (epoch seconds); "" = none */
} pod_parts;

static void replica(cf_yaml_out *y, const pod_parts *pp, const char *role, int replicas, cf_buf *scratch)
{
    const cf_config *c = &pp->r->advice->ranked[0];
    const char *spot_key = NULL, *spot_value = NULL;
    if (pp->spot)
        spot_label(c->vm->cloud, &spot_key, &spot_value);
    yo_str(y, role, 0);
    yo_map(y);
    yo_kv_int(y, "replicas", replicas);
    yo_kv_str(y, "restartPolicy", "OnFailure");
    yo_str(y, "template", 0);
    yo_map(y);
    yo_str(y, "spec", 0);
    yo_map(y);
    yo_str(y, "nodeSelector", 0);
    yo_map(y);
    own_label(y, pp->k, "kubernetes.io/arch", pp->acc->cpu_arch);
    if (managed_kubernetes(c->vm->cloud))
        own_label(y, pp->k, "node.kubernetes.io/instance-type", c->vm->instance_type);
    if (pp->acc->attached && pp->acc->gke_accelerator[0])
        own_label(y, pp->k, "cloud.google.com/gke-accelerator", pp->acc->gke_accelerator);
    if (spot_key)
        own_label(y, pp->k, spot_key, spot_value);
    for (size_t i = 0; i < pp->k->n_node_selectors; i++) {
        const char *kv = pp->k->node_selectors[i], *eq = strchr(kv, '=');
        scratch->len = 0;
        cf_buf_append(scratch, kv, (size_t)(eq - kv));
        yo_kv_quoted(y, cf_buf_cstr(scratch), eq + 1);
    }
    yo_map_end(y);
    if (spot_key) {
        yo_str(y, "tolerations", 0);
        yo_seq(y);
        yo_map(y);
        yo_kv_str(y, "key", spot_key);
        yo_kv_str(y, "operator", "Equal");
        yo_kv_quoted(y, "value", spot_value);
        yo_kv_str(y, "effect", "NoSchedule");
        yo_map_end(y);
        yo_seq_end(y);
    }
    yo_str(y, "containers", 0);
    yo_seq(y);
    yo_map(y);
    yo_kv_str(y, "name", "pytorch");
    yo_kv_str(y, "image", pp->image);
    /* No shell runs in the container: one list element per word. */
    yo_str(y, "command", 0);
    yo_seq(y);
    yo_str(y, "torchrun", 0);
    for (size_t i = 0; i < pp->entry->n; i++)
        k8s_literal(y, pp->entry->words[i], scratch);
    yo_seq_end(y);
    yo_str(y, "env", 0);
    yo_seq(y);
    for (size_t i = 0; i < pp->env->n; i++) {
        yo_map(y);
        yo_kv_str(y, "name", pp->env->items[i].name);
        yo_kv_quoted(y, "value", pp->env->items[i].value);
        yo_map_end(y);
    }
    if (pp->phase[0]) {
        yo_map(y);
        yo_kv_str(y, "name", "CLOUDFIT_PHASE");
        yo_kv_quoted(y, "value", pp->phase);
        yo_map_end(y);
    }
    if (pp->deadline_at[0]) {
        yo_map(y);
        yo_kv_str(y, "name", "CLOUDFIT_DEADLINE_AT");
        yo_kv_quoted(y, "value", pp->deadline_at);
        yo_map_end(y);
    }
    yo_seq_end(y);
    yo_str(y, "resources", 0);
    yo_map(y);
    yo_str(y, "limits", 0);
    yo_map(y);
    yo_kv_int(y, pp->acc->k8s_resource, c->gpus_per_node);
    yo_map_end(y);
    yo_map_end(y);
    yo_map_end(y);
    yo_seq_end(y);
    yo_map_end(y);
    yo_map_end(y);
    yo_map_end(y);
}

cf_status cf_emit_k8s(const cf_report *r, const char *entrypoint, cf_buf *out)
{
    static const cf_emit_k8s_options none = {NULL, 0};
    return cf_emit_k8s_with(r, entrypoint, &none, out);
}

/* The image for the VM's GPU and CPU architecture. */
static cf_status image_for(const cf_report *r, const cf_vm *vm, const char *cpu_arch, char **image)
{
    const cf_gpu *gpu = r->catalog ? cf_catalog_gpu(r->catalog, vm->gpu_model) : NULL;
    if (!gpu || !gpu->architecture[0])
        return cf_error_set(CF_ERR_INVALID, "the GPU table has no architecture for %s: no container image can be chosen",
                            vm->gpu_model);
    return cf_emit_image_for(gpu->architecture, cpu_arch, image);
}

/* One PyTorchJob document named `name`: on spot VMs (elastic when
 * several) or on demand; `suspend` creates it suspended. */
static cf_status job_doc(const cf_report *r, const cf_emit_job *job, const pod_parts *parts, const char *name,
                         int spot, int suspend, const char *phase, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    int elastic = spot && c->nodes > 1;
    cf_buf text = CF_BUF_INIT, scratch = CF_BUF_INIT;
    cf_yaml_out y;
    yo_begin(&y, out);
    yo_map(&y);
    yo_kv_str(&y, "apiVersion", "kubeflow.org/v1");
    yo_kv_str(&y, "kind", "PyTorchJob");
    yo_str(&y, "metadata", 0);
    yo_map(&y);
    yo_kv_str(&y, "name", name);
    yo_str(&y, "labels", 0);
    yo_map(&y);
    yo_kv_str(&y, "app.kubernetes.io/created-by", "cloudfit");
    yo_map_end(&y);
    yo_str(&y, "annotations", 0);
    yo_map(&y);
    yo_kv_quoted(&y, "cloudfit/spec-name", r->spec->job.name);
    yo_kv_quoted(&y, "cloudfit/spec-hash", r->spec->hash);
    cf_buf_printf(&text, "%s/%s", c->vm->cloud, c->vm->region);
    yo_kv_quoted(&y, "cloudfit/cloud-region", cf_buf_cstr(&text));
    text.len = 0;
    cf_buf_printf(&text, "%.4g", c->hours);
    yo_kv_quoted(&y, "cloudfit/predicted-hours", cf_buf_cstr(&text));
    text.len = 0;
    cf_buf_printf(&text, "%.2f", c->total_usd);
    yo_kv_quoted(&y, "cloudfit/predicted-usd", cf_buf_cstr(&text));
    if (phase[0])
        yo_kv_quoted(&y, "cloudfit/phase", phase);
    yo_map_end(&y);
    yo_map_end(&y);
    yo_str(&y, "spec", 0);
    yo_map(&y);
    text.len = 0;
    cf_buf_printf(&text, "%d", c->gpus_per_node);
    yo_kv_quoted(&y, "nprocPerNode", cf_buf_cstr(&text));
    if (suspend) {
        yo_str(&y, "runPolicy", 0);
        yo_map(&y);
        yo_kv_bool(&y, "suspend", 1);
        yo_map_end(&y);
    }
    if (elastic) {
        yo_str(&y, "elasticPolicy", 0);
        yo_map(&y);
        yo_kv_str(&y, "rdzvBackend", "c10d");
        yo_kv_int(&y, "minReplicas", cf_emit_min_nodes(r, c));
        yo_kv_int(&y, "maxReplicas", c->nodes);
        yo_kv_int(&y, "maxRestarts", 3 * c->nodes);
        yo_map_end(&y);
    }
    yo_str(&y, "pytorchReplicaSpecs", 0);
    yo_map(&y);
    pod_parts pp = *parts;
    pp.entry = &job->entry;
    pp.env = &job->env;
    pp.spot = spot;
    pp.phase = phase;
    if (elastic) {
        replica(&y, &pp, "Worker", c->nodes, &scratch);
    } else {
        replica(&y, &pp, "Master", 1, &scratch);
        if (c->nodes > 1)
            replica(&y, &pp, "Worker", c->nodes - 1, &scratch);
    }
    yo_map_end(&y);
    yo_map_end(&y);
    yo_map_end(&y);
    cf_status st = yo_end(&y);
    if (st == CF_OK && (cf_buf_failed(&text) || cf_buf_failed(&scratch)))
        st = cf_error_set(CF_ERR_NOMEM, "out of memory");
    cf_buf_free(&text);
    cf_buf_free(&scratch);
    return st;
}

cf_status cf_emit_k8s_with(const cf_report *r, const char *entrypoint, const cf_emit_k8s_options *k, cf_buf *out)
{
    const cf_config *c = &r->advice->ranked[0];
    if (cf_emit_k8s_check_selectors(k->node_selectors, k->n_node_selectors) != CF_OK)
        return CF_ERR_USAGE;
    cf_emit_job job;
    cf_status st = cf_emit_job_begin(r, entrypoint, &job);
    if (st != CF_OK)
        return st;
    cf_emit_accelerator acc = {0};
    char *image = NULL;
    if ((st = cf_emit_accelerator_for(c->vm, &acc)) != CF_OK || (st = image_for(r, c->vm, acc.cpu_arch, &image)) != CF_OK)
        goto done;

    cf_emit_header(r, c->mixed ? "Kubeflow PyTorchJobs (a mixed plan)" : "Kubeflow PyTorchJob", out);
    cf_buf_printf(out, "# Image: %s: PyTorch with code for this GPU, published for %s\n"
                       "# hosts (data/launch_images.csv); build your training image on it and set it here.\n",
                  image, acc.cpu_arch);
    if (!c->mixed)
        cf_buf_puts(out, "# Apply: kubectl apply -f THIS_FILE\n");
    if (!managed_kubernetes(c->vm->cloud))
        cf_buf_printf(out, "# On %s no managed Kubernetes labels nodes with their instance type: no instance-type\n"
                           "# selector is written%s.\n",
                      c->vm->cloud, k->n_node_selectors ? "; the node selector has your --node-selector labels"
                                                        : "; add your cluster's label with --node-selector KEY=VALUE");
    if (c->spot && c->nodes > 1)
        cf_buf_printf(out, "# Elastic (spot): %d Workers, the job goes on with %d to %d of them.\n", c->nodes,
                      cf_emit_min_nodes(r, c), c->nodes);
    pod_parts parts = {r, &job.entry, &job.env, &acc, image, k, c->spot, "", ""};
    if (!c->mixed) {
        st = job_doc(r, &job, &parts, job.name, c->spot, 0, "", out);
    } else {
        /* Names: 48 characters at most plus "-sp" / "-od" keep
         * "<name>-worker-<index>" a 63-character label (4096 nodes). */
        /* `kubectl apply` passes no environment to the pods, so the
         * deadline is in the file: D hours after it was written (the
         * recommendation's time, SOURCE_DATE_EPOCH in tests), and the header
         * says how to count them from the launch instead. A late launch
         * with the written value only switches to on demand earlier: the
         * deadline holds, at more cost. */
        long long written = 0, deadline_at = 0;
        if ((st = cf_iso8601_epoch(r->created_at, &written)) != CF_OK)
            goto done;
        deadline_at = written + llround(c->spot_est.deadline_h * 3600.0);
        char deadline_text[32];
        snprintf(deadline_text, sizeof deadline_text, "%lld", deadline_at);
        parts.deadline_at = deadline_text;
        cf_emit_mixed_note(r, deadline_at, out);
        cf_buf sp = CF_BUF_INIT, od = CF_BUF_INIT;
        cf_buf_printf(&sp, "%s-sp", job.name);
        cf_buf_printf(&od, "%s-od", job.name);
        char seconds[32], deadline[48];
        cf_number_plain_text(c->spot_est.deadline_h, CF_NUMBER_AS_GIVEN, deadline, sizeof deadline);
        cf_buf_printf(out, "# Apply: kubectl apply -f THIS_FILE (the deadline above), or to count the %s h from the launch:\n"
                           "#   sed 's/\"%lld\"/\"'$(( $(date +%%s) + %s ))'\"/' THIS_FILE | kubectl apply -f -\n",
                      deadline, deadline_at,
                      cf_emit_deadline_seconds(c->spot_est.deadline_h, seconds, sizeof seconds));
        cf_buf_printf(out, "# Two jobs: %s on spot VMs, and %s on demand, created suspended. At the switch-over,\n"
                           "# when %s has finished:\n"
                           "#   kubectl patch pytorchjob %s --type merge -p '{\"spec\":{\"runPolicy\":{\"suspend\":false}}}'\n",
                      cf_buf_cstr(&sp), cf_buf_cstr(&od), cf_buf_cstr(&sp), cf_buf_cstr(&od));
        st = cf_buf_failed(&sp) || cf_buf_failed(&od) ? cf_error_set(CF_ERR_NOMEM, "out of memory") : CF_OK;
        if (st == CF_OK)
            st = job_doc(r, &job, &parts, cf_buf_cstr(&sp), 1, 0, "spot", out);
        cf_buf_puts(out, "---\n");
        if (st == CF_OK)
            st = job_doc(r, &job, &parts, cf_buf_cstr(&od), 0, 1, "ondemand", out);
        cf_buf_free(&sp);
        cf_buf_free(&od);
    }

done:
    free(image);
    cf_emit_accelerator_free(&acc);
    cf_emit_job_free(&job);
    return st;
}
