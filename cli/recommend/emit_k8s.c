/* --emit k8s: a Kubeflow Training Operator PyTorchJob (kubeflow.org/v1).
 * One Master and nodes−1 Workers, each a whole VM of the chosen type
 * (node selector on the instance type, all its GPUs), torchrun as the
 * command (the operator passes PET_* rendezvous settings); spot runs get
 * an elasticPolicy and the cloud's spot node label. */
#include <stdio.h>
#include <string.h>

#include "recommend/emit_common.h"
#include "render/yaml_out.h"

/* The node label each managed Kubernetes service puts on spot nodes. */
static void spot_selector(cf_yaml_out *y, const char *cloud)
{
    if (strcmp(cloud, "aws") == 0)
        yo_kv_quoted(y, "eks.amazonaws.com/capacityType", "SPOT");
    else if (strcmp(cloud, "gcp") == 0)
        yo_kv_quoted(y, "cloud.google.com/gke-spot", "true");
    else if (strcmp(cloud, "azure") == 0)
        yo_kv_quoted(y, "kubernetes.azure.com/scalesetpriority", "spot");
}

static void command(cf_yaml_out *y, const char *entrypoint)
{
    yo_str(y, "command", 0);
    yo_seq(y);
    yo_str(y, "torchrun", 0);
    /* The entry point is split at spaces: no shell runs in the container. */
    char word[512];
    size_t len = 0;
    for (const char *p = entrypoint;; p++) {
        if (*p == ' ' || *p == '\t' || *p == '\0') {
            if (len) {
                word[len] = '\0';
                yo_str(y, word, 0);
                len = 0;
            }
            if (!*p)
                break;
        } else if (len + 1 < sizeof word) {
            word[len++] = *p;
        }
    }
    yo_seq_end(y);
}

static void replica(cf_yaml_out *y, const cf_report *r, const char *entrypoint, const char *role, int replicas)
{
    const cf_config *c = &r->advice->ranked[0];
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
    yo_kv_quoted(y, "node.kubernetes.io/instance-type", c->vm->instance_type);
    if (c->spot)
        spot_selector(y, c->vm->cloud);
    yo_map_end(y);
    yo_str(y, "containers", 0);
    yo_seq(y);
    yo_map(y);
    yo_kv_str(y, "name", "pytorch");
    yo_kv_str(y, "image", "pytorch/pytorch:latest");
    command(y, entrypoint);
    yo_str(y, "env", 0);
    yo_seq(y);
    cf_emit_env env[CF_EMIT_MAX_ENV];
    size_t n_env = cf_emit_envs(r, env);
    for (size_t i = 0; i < n_env; i++) {
        yo_map(y);
        yo_kv_str(y, "name", env[i].name);
        yo_kv_quoted(y, "value", env[i].value);
        yo_map_end(y);
    }
    yo_seq_end(y);
    yo_str(y, "resources", 0);
    yo_map(y);
    yo_str(y, "limits", 0);
    yo_map(y);
    yo_kv_int(y, "nvidia.com/gpu", c->gpus_per_node);
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
    const cf_config *c = &r->advice->ranked[0];
    cf_emit_header(r, "Kubeflow PyTorchJob", out);
    cf_buf_puts(out, "# Set the image to your training image. Apply: kubectl apply -f THIS_FILE\n");
    char name[64], text[64];
    cf_emit_dns_name(r->spec->job.name, name, sizeof name);
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
    yo_kv_quoted(&y, "cloudfit/spec-hash", r->spec->hash);
    snprintf(text, sizeof text, "%s/%s", c->vm->cloud, c->vm->region);
    yo_kv_quoted(&y, "cloudfit/cloud-region", text);
    snprintf(text, sizeof text, "%.4g", c->hours);
    yo_kv_quoted(&y, "cloudfit/predicted-hours", text);
    snprintf(text, sizeof text, "%.2f", c->total_usd);
    yo_kv_quoted(&y, "cloudfit/predicted-usd", text);
    yo_map_end(&y);
    yo_map_end(&y);
    yo_str(&y, "spec", 0);
    yo_map(&y);
    snprintf(text, sizeof text, "%d", c->gpus_per_node);
    yo_kv_quoted(&y, "nprocPerNode", text);
    if (c->spot) {
        yo_str(&y, "elasticPolicy", 0);
        yo_map(&y);
        yo_kv_str(&y, "rdzvBackend", "c10d");
        yo_kv_int(&y, "minReplicas", cf_emit_min_nodes(c));
        yo_kv_int(&y, "maxReplicas", c->nodes);
        yo_kv_int(&y, "maxRestarts", 3 * c->nodes);
        yo_map_end(&y);
    }
    yo_str(&y, "pytorchReplicaSpecs", 0);
    yo_map(&y);
    replica(&y, r, entrypoint, "Master", 1);
    if (c->nodes > 1)
        replica(&y, r, entrypoint, "Worker", c->nodes - 1);
    yo_map_end(&y);
    yo_map_end(&y);
    yo_map_end(&y);
    return yo_end(&y);
}
