/* What a trace's path says about its VMs (docs/spot.md "Trace folders"):
 * the layout of the public traces (skypilot-org/spot-traces) and the names
 * of their CSV copies in examples/spot-traces/. */
#include "cloudfit/profiler/spot_traces.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int all_digits(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* A count of 1–6 digits at s (len characters), into *v; 0 otherwise. */
static int small_count(const char *s, size_t len, int *v)
{
    if (len > 6 || !all_digits(s, len))
        return 0;
    *v = atoi(s);
    return 1;
}

/* "MM-DD-YYYY" (exactly 10 characters at s) into "YYYY-MM-DD". */
static int us_date(const char *s, char *iso, size_t n)
{
    if (!(all_digits(s, 2) && s[2] == '-' && all_digits(s + 3, 2) && s[5] == '-' && all_digits(s + 6, 4)))
        return 0;
    int month = atoi(s), day = atoi(s + 3);
    if (month < 1 || month > 12 || day < 1 || day > 31)
        return 0;
    snprintf(iso, n, "%.4s-%.2s-%.2s", s + 6, s, s + 3);
    return 1;
}

int cf_spot_zone_cloud(const char *zone, char *cloud, size_t n_cloud, char *region, size_t n_region)
{
    size_t len = strlen(zone);
    /* AWS: a region ending in its number, then one letter (us-east-1a). */
    if (len >= 4 && islower((unsigned char)zone[len - 1]) && isdigit((unsigned char)zone[len - 2]) &&
        strchr(zone, '-')) {
        snprintf(cloud, n_cloud, "aws");
        snprintf(region, n_region, "%.*s", (int)(len - 1), zone);
        return 1;
    }
    /* Google Cloud: a region ending in its number, a dash, one letter
     * (us-central1-a). */
    if (len >= 4 && islower((unsigned char)zone[len - 1]) && zone[len - 2] == '-' &&
        isdigit((unsigned char)zone[len - 3])) {
        snprintf(cloud, n_cloud, "gcp");
        snprintf(region, n_region, "%.*s", (int)(len - 2), zone);
        return 1;
    }
    return 0;
}

/* The last `n` components of path (empty ones skipped), each into
 * parts[i] from the left; 0 when there are fewer or one is too long. */
static int last_components(const char *path, int n, char parts[][128])
{
    const char *comp[64];
    size_t lens[64];
    int count = 0;
    for (const char *p = path; *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *q = strchr(p, '/');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (count == 64) {
            memmove(comp, comp + 1, 63 * sizeof *comp);
            memmove(lens, lens + 1, 63 * sizeof *lens);
            count--;
        }
        comp[count] = p;
        lens[count++] = len;
        p += len;
    }
    if (count < n)
        return 0;
    for (int i = 0; i < n; i++) {
        size_t len = lens[count - n + i];
        if (len >= 128)
            return 0;
        memcpy(parts[i], comp[count - n + i], len);
        parts[i][len] = '\0';
    }
    return 1;
}

/* Strips ".csv" / ".json"; 0 for another extension. */
static int strip_extension(char *name)
{
    size_t len = strlen(name);
    if (len > 4 && strcmp(name + len - 4, ".csv") == 0)
        name[len - 4] = '\0';
    else if (len > 5 && strcmp(name + len - 5, ".json") == 0)
        name[len - 5] = '\0';
    else
        return 0;
    return 1;
}

/* dst (size n) = the first len bytes of src; 0 when they do not fit. */
static int copy_part(char *dst, size_t n, const char *src, size_t len)
{
    if (len >= n)
        return 0;
    memcpy(dst, src, len);
    dst[len] = '\0';
    return 1;
}

static void set_gpu(cf_spot_trace_vm *vm, const char *token, size_t len)
{
    if (len >= sizeof vm->gpu)
        len = sizeof vm->gpu - 1;
    for (size_t i = 0; i < len; i++)
        vm->gpu[i] = (char)toupper((unsigned char)token[i]);
    vm->gpu[len] = '\0';
}

/* availability/16-node/aws-08-27-2023/us-east-2b_v100_1.json */
static int public_layout(const char *path, cf_spot_trace_vm *vm)
{
    char parts[3][128];
    if (!last_components(path, 3, parts) || !strip_extension(parts[2]))
        return 0;
    char *dash = strstr(parts[0], "-node");
    int nodes = 0;
    if (!dash || strcmp(dash, "-node") != 0 || !small_count(parts[0], (size_t)(dash - parts[0]), &nodes))
        return 0;
    size_t cl = strlen(parts[1]);
    if (cl < 12 || parts[1][cl - 11] != '-' || !us_date(parts[1] + cl - 10, vm->start_date, sizeof vm->start_date))
        return 0;
    if (!copy_part(vm->cloud, sizeof vm->cloud, parts[1], cl - 11))
        return 0;
    char *count = strrchr(parts[2], '_');
    int per_vm = 0;
    if (!count || !small_count(count + 1, strlen(count + 1), &per_vm))
        return 0;
    *count = '\0';
    char *gpu = strrchr(parts[2], '_');
    if (!gpu || gpu == parts[2] || !gpu[1])
        return 0;
    *gpu++ = '\0';
    if (!copy_part(vm->zone, sizeof vm->zone, parts[2], strlen(parts[2])))
        return 0;
    char cloud[CF_CLOUD_NAME_MAX];
    if (!cf_spot_zone_cloud(vm->zone, cloud, sizeof cloud, vm->region, sizeof vm->region))
        snprintf(vm->region, sizeof vm->region, "%s", vm->zone);
    set_gpu(vm, gpu, strlen(gpu));
    vm->gpus_per_vm = per_vm;
    vm->requested = nodes;
    return nodes > 0;
}

/* availability_16node_08-27-2023_us-east-2b_V100x1.csv */
static int copy_name(const char *path, cf_spot_trace_vm *vm)
{
    char parts[1][128];
    if (!last_components(path, 1, parts) || !strip_extension(parts[0]))
        return 0;
    char *f = parts[0];
    char *u1 = strchr(f, '_');
    if (!u1 || (strncmp(f, "availability_", 13) != 0 && strncmp(f, "preemption_", 11) != 0))
        return 0;
    char *nodes_s = u1 + 1, *u2 = strchr(nodes_s, '_');
    int nodes = 0;
    if (!u2 || u2 - nodes_s < 5 || strncmp(u2 - 4, "node", 4) != 0 || !small_count(nodes_s, (size_t)(u2 - 4 - nodes_s), &nodes))
        return 0;
    char *date = u2 + 1;
    if (strlen(date) < 11 || date[10] != '_' || !us_date(date, vm->start_date, sizeof vm->start_date))
        return 0;
    char *zone = date + 11, *u4 = strrchr(zone, '_');
    if (!u4 || u4 == zone)
        return 0;
    char *shape = u4 + 1, *x = strrchr(shape, 'x');
    int per_vm = 0;
    if (!x || x == shape || !small_count(x + 1, strlen(x + 1), &per_vm))
        return 0;
    if (!copy_part(vm->zone, sizeof vm->zone, zone, (size_t)(u4 - zone)))
        return 0;
    if (!cf_spot_zone_cloud(vm->zone, vm->cloud, sizeof vm->cloud, vm->region, sizeof vm->region))
        return 0;
    set_gpu(vm, shape, (size_t)(x - shape));
    vm->gpus_per_vm = per_vm;
    vm->requested = nodes;
    return nodes > 0;
}

int cf_spot_trace_vm_from_path(const char *path, cf_spot_trace_vm *vm)
{
    cf_spot_trace_vm found;
    memset(&found, 0, sizeof found);
    if (!public_layout(path, &found)) {
        memset(&found, 0, sizeof found);
        if (!copy_name(path, &found))
            return 0;
    }
    *vm = found;
    return 1;
}
