/* GPU names as real tools print them, resolved against the shipped GPU
 * table (cf_gpu_resolve; docs/catalog.md "GPU names"). Every row of the
 * table, and so every GPU the catalog sells, has at least one spelling a
 * tool prints; a second table holds names of other products that must not
 * become a row of the table (the near miss each would be is named).
 *
 * Sources of the spellings (each row names one):
 *   DRV    NVIDIA/open-gpu-kernel-modules README @df1c9a3, "supported GPUs":
 *          the product names the driver reports, which nvidia-smi
 *          --query-gpu=name and torch.cuda.get_device_name() print (Turing
 *          and newer)
 *   LAMBDA ../shared/data/crossgpu notes: the nvidia-smi name of each row,
 *          read from lambdal/deeplearning-benchmark run directories
 *          (sys_pytorch.txt), spaces written as '_' there
 *   XGPU   the same file's `gpu` column (cloudfit's own row labels)
 *   VLLM   torch device names in vllm-project/vllm file names
 *          model_executor/layers/fused_moe/configs/E=..,device_name=NAME
 *          (spaces as '_')
 *   AMDSMI amd-smi market_name / product_name quoted in ROCm/vllm#359
 *   SMIQ   nvidia-smi -q "Product Name" in NVIDIA/nvidia-docker issues
 *          (#809 K80, #1285 V100-PCIE-16GB, #1076 V100-SXM2-32GB, #1628 T4)
 *   SMI    the nvidia-smi table in public logs (find "0  Tesla M60",
 *          "0  Tesla P4" in GitHub code; many captures)
 *   TF     TensorFlow's device log "name: Tesla P100-PCIE-16GB"
 *          (googlecolab/colabtools#1406), "Tesla V100S-PCIE-32GB" (public
 *          notebook logs)
 *   GRES   Slurm GRES type names in public job scripts
 *          (--gres=gpu:QuadroRTX6000:1, gpu:quadro_rtx_6000:1) and Lambda's
 *          result directories (QuadroRTX8000 in
 *          lambdal/deeplearning-benchmark scripts/compile_results_pytorch.py)
 *   USER   spellings users write in measurement CSVs (issue 13)
 *   PCI    pci.ids / device-id tables (10de:2339 = H100 SXM5 94GB)
 *   VF     device logs of SR-IOV guests in public code: rccl-tests'
 *          "Using devices" lines, ROCm benchmark reports ("Device: AMD
 *          Instinct MI300X VF")
 *   PCIDB  rocm-smi's card series / device name, the PCI database's name
 *          of 1002:74a1 ("Aqua Vanjaram [Instinct MI300X]", with " VF]" in
 *          an SR-IOV guest: ROCM-SMI 2.2.0 JSON quoted in public code and
 *          notes of DigitalOcean MI300X droplets); lspci shows the same
 *   VGPU   nvidia-smi / torch in NVIDIA vGPU guests, in public notes and
 *          logs: "NVIDIA A10-24Q" on Azure's Standard_NV36ads_A10_v5
 *          (a catalog offer), "NVIDIA L4-24Q", "GRID T4-16Q"; NVIDIA's
 *          vGPU profile tables ("H100-80C" is the H100 PCIe, "H100XM-80C"
 *          the SXM5) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cloudfit/pricing.h"

static cf_catalog embedded;

static int setup_embedded(void **state)
{
    (void)state;
    return cf_catalog_load_embedded(&embedded) == CF_OK ? 0 : -1;
}

static int teardown_embedded(void **state)
{
    (void)state;
    cf_catalog_free(&embedded);
    return 0;
}

typedef struct {
    const char *name, *model, *source;
} spelling;

static const spelling RESOLVES[] = {
    /* Kepler, Maxwell, Pascal */
    {"Tesla K80", "K80", "SMIQ nvidia-docker#809"},
    {"Tesla M60", "M60", "SMI"},
    {"Tesla P4", "P4", "SMI"},
    {"Tesla P100-PCIE-16GB", "P100", "TF colabtools#1406"},
    /* Volta */
    {"Tesla V100-SXM2-16GB", "V100", "LAMBDA, SMIQ nvidia-docker#914"},
    {"Tesla_V100-SXM2-16GB", "V100", "LAMBDA"},
    {"Tesla V100-SXM2-32GB", "V100-32GB", "LAMBDA, SMIQ nvidia-docker#1076"},
    {"TeslaV100_SXM2_32GB", "V100-32GB", "GRES (LSF gpu model names)"},
    {"Tesla V100-PCIE-16GB", "V100-PCIE", "SMIQ nvidia-docker#1285"},
    {"Tesla V100-PCIE-32GB", "V100-PCIE-32GB", "USER (issue 13)"},
    {"Tesla V100S-PCIE-32GB", "V100S-PCIE", "TF"},
    {"V100S", "V100S-PCIE", "USER: a family name"},
    /* Turing */
    {"Tesla T4", "T4", "DRV, SMIQ nvidia-docker#1628"},
    {"NVIDIA-L4", "L4", "USER"},
    {"Quadro RTX 6000", "RTX6000", "DRV, LAMBDA"},
    {"Quadro_RTX_6000", "RTX6000", "LAMBDA"},
    {"QuadroRTX6000", "RTX6000", "GRES"},
    {"QUADRORTX6000", "RTX6000", "GRES"},
    {"quadro_rtx_6000", "RTX6000", "GRES"},
    {"RTX6000", "RTX6000", "XGPU"},
    /* Ampere */
    {"NVIDIA A10", "A10", "DRV, VLLM, LAMBDA"},
    {"NVIDIA A10G", "A10G", "DRV"},
    {"NVIDIA A30", "A30", "DRV"},
    {"NVIDIA A40", "A40", "DRV"},
    {"A40", "A40", "LAMBDA (older driver)"},
    {"NVIDIA RTX A6000", "A6000", "DRV, LAMBDA"},
    {"RTX_A6000", "A6000", "LAMBDA"},
    {"rtxa6000", "A6000", "GRES (--gres=gpu:rtxa6000:1)"},
    {"RTXA6000", "A6000", "GRES (--gres=gpu:RTXA6000:4)"},
    {"NVIDIARTXA6000", "A6000", "GRES"},
    {"NVIDIA A100-SXM4-40GB", "A100-40GB", "DRV"},
    {"A100-SXM4-40GB", "A100-40GB", "LAMBDA (older driver)"},
    {"A100", "A100-40GB", "the Sia DGX A100 data: a family name"},
    {"a100 40gb", "A100-40GB", "USER"},
    {"NVIDIA A100-SXM4-80GB", "A100-80GB", "DRV, VLLM, LAMBDA"},
    {"A100-SXM-80GB", "A100-80GB", "LAMBDA (older driver)"},
    {"NVIDIA A100 80GB PCIe", "A100-80GB-PCIE", "DRV, VLLM, LAMBDA"},
    {"A100-PCIE-80GB", "A100-80GB-PCIE", "LAMBDA (older driver)"},
    /* Ada */
    {"NVIDIA L4", "L4", "DRV, VLLM"},
    {"NVIDIA L40S", "L40S", "DRV, VLLM"},
    /* Hopper */
    {"NVIDIA H100 80GB HBM3", "H100", "DRV, VLLM, LAMBDA"},
    {"NVIDIA_H100_80GB_HBM3", "H100", "LAMBDA"},
    {"H100", "H100", "XGPU"},
    {"NVIDIA H100 PCIe", "H100-PCIE", "DRV, VLLM, LAMBDA"},
    {"NVIDIA H100 NVL", "H100-NVL", "DRV, VLLM"},
    {"NVIDIA H200", "H200", "DRV, VLLM, LAMBDA"},
    {"NVIDIA GH200 480GB", "GH200", "DRV, LAMBDA (97,871 MiB GPU memory)"},
    {"NVIDIA_GH200_480GB", "GH200", "LAMBDA, VLLM"},
    {"NVIDIA GH200 120GB", "GH200", "DRV (same device 10de:2342)"},
    /* Blackwell */
    {"NVIDIA B200", "B200", "DRV, VLLM, LAMBDA"},
    {"NVIDIA B300 SXM6 AC", "B300", "DRV"},
    {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000", "DRV, VLLM"},
    {"NVIDIA RTX PRO 4500 Blackwell", "RTX-PRO-4500", "DRV"},
    /* rows cloudfit adds for names the tools print (data/gpus_added.csv, issue 25) */
    {"NVIDIA RTX 6000 Ada Generation", "RTX6000-Ada", "DRV, LAMBDA"},
    {"NVIDIA_RTX_6000_Ada_Generation", "RTX6000-Ada", "LAMBDA"},
    {"RTX6000-Ada", "RTX6000-Ada", "XGPU"},
    {"NVIDIA A100-PCIE-40GB", "A100-40GB-PCIE", "DRV, LAMBDA"},
    {"NVIDIA A100-PCIe-40GB", "A100-40GB-PCIE", "VLLM"},
    {"A100-40GB-PCIE", "A100-40GB-PCIE", "XGPU"},
    {"NVIDIA H200 NVL", "H200-NVL", "DRV, LAMBDA"},
    {"H200-NVL", "H200-NVL", "XGPU"},
    /* AMD */
    {"AMD Instinct MI300X", "MI300X", "AMDSMI market_name, VLLM (torch on ROCm)"},
    {"AMD_Instinct_MI300X", "MI300X", "VLLM"},
    {"AMD Instinct MI300X OAM", "MI300X", "AMDSMI product_name"},
    {"AMD Instinct MI300X VF", "MI300X", "VF: amd-smi, rccl-tests and torch in an SR-IOV guest (Azure ND MI300X v5)"},
    {"Aqua Vanjaram [Instinct MI300X]", "MI300X", "PCIDB: rocm-smi card series, lspci"},
    {"Aqua Vanjaram [Instinct MI300X VF]", "MI300X", "PCIDB: rocm-smi in an SR-IOV guest"},
    {"AMD INSTINCT MI300X (HBM3) OAM", "MI300X", "rocm-smi card series on bare metal"},
    /* a vGPU profile of the whole GPU, for a row alone in its family */
    {"NVIDIA A10-24Q", "A10", "VGPU: Azure Standard_NV36ads_A10_v5 / NV72ads_A10_v5"},
    {"NVIDIA L4-24Q", "L4", "VGPU"},
    {"GRID T4-16Q", "T4", "VGPU (older vGPU drivers)"},
    {"NVIDIA T4-16C", "T4", "VGPU: compute profile"},
};

/* Other products: the table has no row for them, so they resolve to none,
 * least of all to the near miss beside them. */
static const spelling REFUSES[] = {
    {"Quadro RTX 8000", "RTX6000", "DRV"},
    {"Quadro RTX 5000", "RTX6000", "DRV"},
    {"Quadro 6000", "RTX6000", "the 2010 Fermi Quadro"},
    {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX-PRO-6000", "DRV, VLLM: another board"},
    {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX-PRO-6000", "DRV: 300 W"},
    {"NVIDIA A100-SXM-64GB", "A100-80GB", "DRV"},
    {"NVIDIA H100", "H100", "DRV, VLLM, PCI: the H100 SXM5 94GB (10de:2339)"},
    {"NVIDIA H800", "H100", "DRV"},
    {"NVIDIA H800 PCIe", "H100-PCIE", "DRV"},
    {"NVIDIA H20", "H200", "DRV, VLLM"},
    {"NVIDIA GH200 144G HBM3e", "GH200", "DRV: 144 GB HBM3e, not the 96 GB HBM3 row"},
    {"NVIDIA GB200", "B200", "DRV, VLLM"},
    {"gb200", "B200", "a glued letter that describes no row"},
    {"rtxa4000", "A6000", "GRES: the RTX A4000, no row"},
    {"NVIDIA GB300", "B300", "DRV"},
    {"NVIDIA L40", "L40S", "DRV"},
    {"NVIDIA A10M", "A10", "DRV"},
    {"Tesla P100-SXM2-16GB", "P100", "the SXM2 P100 (10.6 TFLOPS, NVLink); the row is PCIe"},
    {"Tesla P100-PCIE-12GB", "P100", "the 12 GB P100"},
    {"Tesla V100-SXM3-32GB", "V100-32GB", "DGX-2's SXM3 V100"},
    {"Tesla PG500-216", "V100-PCIE-32GB", "akash-network/provider-configs#90"},
    {"AMD Instinct MI308X", "MI300X", "VLLM"},
    {"AMD Instinct MI325X", "MI300X", "VLLM"},
    {"Aqua Vanjaram [Instinct MI308X]", "MI300X", "PCIDB: the same chip codename, another product"},
    {"AMD Radeon Graphics", "MI300X", "VLLM: the generic name some ROCm set-ups print"},
    {"NVIDIA GeForce RTX 3090", NULL, "DRV, LAMBDA"},
    {"RTX 8000", NULL, "USER"},
    {"RTX3080-MaxQ", NULL, "XGPU"},
    {"NVIDIA A100-SXM4-40GB MIG 1g.5gb", "A100-40GB", "a MIG slice is not the GPU"},
    {"NVIDIA A10-4Q", "A10", "VGPU: a sixth of an A10 (Azure NV6ads_A10_v5) is not the GPU"},
    {"NVIDIA A10-12Q", "A10", "VGPU: half an A10"},
    {"NVIDIA H100-80C", "H100", "VGPU: the H100 PCIe's profile, not the SXM5 row"},
    {"NVIDIA H100XM-80C", "H100", "VGPU: the SXM5's, a model word of no row"},
    {"GRID V100-16Q", "V100", "VGPU: the V100 PCIe's profile (the SXM2's is V100X-16Q)"},
    {"NVIDIA A100-40C", "A100-40GB", "VGPU: the A100 PCIe 40GB's profile"},
    {"Tesla T4 (fake)", "T4", "tests/search/fake_runner.py"},
    {"Intel(R) Xeon(R) CPU @ 2.20GHz", NULL, "a CPU"},
    {"A1", NULL, "no such family"},
    {"", NULL, "empty"},
};

static void test_tool_spellings_resolve(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof RESOLVES / sizeof *RESOLVES; i++) {
        const cf_gpu *g = cf_catalog_gpu_resolve(&embedded, RESOLVES[i].name);
        if (!g || strcmp(g->model, RESOLVES[i].model) != 0)
            fail_msg("'%s' (%s) resolved to '%s', expected '%s'", RESOLVES[i].name, RESOLVES[i].source,
                     g ? g->model : "(none)", RESOLVES[i].model);
    }
}

static void test_other_products_resolve_to_none(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof REFUSES / sizeof *REFUSES; i++) {
        const cf_gpu *g = cf_catalog_gpu_resolve(&embedded, REFUSES[i].name);
        if (g)
            fail_msg("'%s' (%s) resolved to '%s'; the table has no row for it%s%s", REFUSES[i].name,
                     REFUSES[i].source, g->model, REFUSES[i].model ? ", the near miss is " : "",
                     REFUSES[i].model ? REFUSES[i].model : "");
    }
    assert_null(cf_catalog_gpu_resolve(&embedded, NULL));
    /* a control character or a byte that is not UTF-8 is no separator: "T\xff4" and "T4\x01" (a damaged
     * measurements CSV's gpu field) were T4; the name without them still is */
    static const char *const damaged[] = {"T\xff" "4", "T4\x01", "\x1b[31mT4", "Tesla\tT4", "T4\xc3", "T\x7f" "4"};
    for (size_t i = 0; i < sizeof damaged / sizeof *damaged; i++)
        if (cf_catalog_gpu_resolve(&embedded, damaged[i]))
            fail_msg("a name with a control or invalid byte (%zu) resolved to '%s'", i,
                     cf_catalog_gpu_resolve(&embedded, damaged[i])->model);
    const cf_gpu *family[4];
    assert_int_equal(cf_gpu_family_rows(embedded.gpus, embedded.n_gpus, "A100\x01", family, 4), 0);
    assert_non_null(cf_catalog_gpu_resolve(&embedded, "T4"));
    assert_non_null(cf_catalog_gpu_resolve(&embedded, "Tesla T4"));
}

/* Each near miss of the refusal table is a row of the table: the test
 * would say nothing if a name had been misspelt. */
static void test_near_misses_are_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof REFUSES / sizeof *REFUSES; i++)
        if (REFUSES[i].model && !cf_catalog_gpu(&embedded, REFUSES[i].model))
            fail_msg("near miss '%s' of '%s' is not a GPU of the table", REFUSES[i].model, REFUSES[i].name);
}

/* Every GPU of the table has a spelling a tool prints (not only its own
 * model name), and so has every GPU a catalog offer sells. */
static void test_every_table_gpu_has_a_tool_spelling(void **state)
{
    (void)state;
    for (size_t k = 0; k < embedded.n_gpus; k++) {
        const char *model = embedded.gpus[k].model;
        int found = 0;
        for (size_t i = 0; i < sizeof RESOLVES / sizeof *RESOLVES && !found; i++)
            found = strcmp(RESOLVES[i].model, model) == 0 && strcasecmp(RESOLVES[i].name, model) != 0;
        if (!found)
            fail_msg("GPU '%s' of the table has no tool spelling in this test", model);
    }
    for (size_t v = 0; v < embedded.n_vms; v++)
        assert_non_null(cf_catalog_gpu(&embedded, embedded.vms[v].gpu_model));
}

/* The catalog's own model names, in any case and with separators, resolve
 * to themselves. */
static void test_table_names_resolve_to_themselves(void **state)
{
    (void)state;
    for (size_t k = 0; k < embedded.n_gpus; k++) {
        const char *model = embedded.gpus[k].model;
        char spaced[64];
        size_t j = 0;
        for (const char *p = model; *p && j + 1 < sizeof spaced; p++)
            spaced[j++] = *p == '-' ? ' ' : (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        spaced[j] = '\0';
        const cf_gpu *g = cf_catalog_gpu_resolve(&embedded, spaced);
        if (!g || strcmp(g->model, model) != 0)
            fail_msg("'%s' resolved to '%s', expected '%s'", spaced, g ? g->model : "(none)", model);
    }
}

/* A GPU table without the descriptive columns still resolves names made of
 * a row's own words, and no longer the ones that need those columns. */
static void test_table_without_descriptive_columns(void **state)
{
    (void)state;
    const char *gpus = "gpu_model,architecture,memory_gib,memory_bandwidth_gbs,fp32_tflops,"
                       "tf32_tensor_tflops_dense,fp16_tensor_tflops_dense,bf16_tensor_tflops_dense,"
                       "intra_node_interconnect,interconnect_gbs_per_gpu\n"
                       "T4,Turing,16,320,8.1,,65,,PCIe,32\n"
                       "H100,Hopper,80,3350,67,494.7,989.4,989.4,NVLink 4.0,450\n";
    const char *vms = "cloud,region,instance_type,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,"
                      "network_gbps,price_ondemand_usd_per_hour,price_spot_usd_per_hour,source\n"
                      "aws,us-east-1,g4dn.xlarge,T4,1,16,4,16,25,0.526,,src\n";
    cf_catalog cat;
    assert_int_equal(cf_catalog_load_csv(vms, strlen(vms), "vms.csv", gpus, strlen(gpus), "gpus.csv", NULL, 0,
                                         "adv.csv", &cat),
                     CF_OK);
    assert_string_equal(cat.gpus[0].form_factor, "");
    assert_string_equal(cf_catalog_gpu_resolve(&cat, "Tesla T4")->model, "T4");
    assert_string_equal(cf_catalog_gpu_resolve(&cat, "NVIDIA H100 80GB")->model, "H100");
    assert_null(cf_catalog_gpu_resolve(&cat, "NVIDIA H100 80GB HBM3")); /* HBM3: no memory_type column */
    cf_catalog_free(&cat);
}

/* cf_gpu_near_rows: for an unknown GPU's hint, the rows of the families
 * the name's words name, most model words first; none for a name of a row. */
static void test_near_rows(void **state)
{
    (void)state;
    const cf_gpu *rows[16];
    size_t n = cf_gpu_near_rows(embedded.gpus, embedded.n_gpus, "A100 PCIe", rows, 16);
    assert_true(n >= 4);
    assert_true(strstr(rows[0]->model, "PCIE") && strstr(rows[1]->model, "PCIE"));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(strncasecmp(rows[i]->model, "A100", 4), 0);
    n = cf_gpu_near_rows(embedded.gpus, embedded.n_gpus, "Tesla V100-SXM2-32GB-LS", rows, 16);
    assert_true(n >= 1);
    assert_string_equal(rows[0]->model, "V100-32GB");
    assert_int_equal(cf_gpu_near_rows(embedded.gpus, embedded.n_gpus, "Tesla T4", rows, 16), 0);
    assert_int_equal(cf_gpu_near_rows(embedded.gpus, embedded.n_gpus, "TPUv5", rows, 16), 0);
    assert_int_equal(cf_gpu_near_rows(embedded.gpus, embedded.n_gpus, "A100\x01", rows, 16), 0);
    assert_int_equal(cf_gpu_near_rows(embedded.gpus, embedded.n_gpus, NULL, rows, 16), 0);
}

/* cf_gpu_family_rows: the rows a bare family name stands for (rule 4), for
 * callers that must not take the first of them for granted; none for a
 * name that names one row. */
static void test_family_rows(void **state)
{
    (void)state;
    const cf_gpu *rows[8];
    size_t n = cf_gpu_family_rows(embedded.gpus, embedded.n_gpus, "a100", rows, 8);
    assert_true(n >= 3);
    assert_ptr_equal(rows[0], cf_catalog_gpu_resolve(&embedded, "a100")); /* rule 4's answer is the first */
    int forty = 0, eighty = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(strncasecmp(rows[i]->model, "A100", 4), 0);
        forty += strcasecmp(rows[i]->model, "A100-40GB") == 0;
        eighty += strcasecmp(rows[i]->model, "A100-80GB") == 0;
    }
    assert_true(forty && eighty);
    assert_int_equal(cf_gpu_family_rows(embedded.gpus, embedded.n_gpus, "NVIDIA A100", rows, 1), 1);
    /* names of one row (rules 1 to 3), of another product (rule 2), of none */
    const char *const one_or_none[] = {"V100", "v100", "Tesla V100-SXM2-32GB", "A100-80GB", "NVIDIA H100", "nosuch",
                                       ""};
    for (size_t i = 0; i < sizeof one_or_none / sizeof *one_or_none; i++)
        assert_int_equal(cf_gpu_family_rows(embedded.gpus, embedded.n_gpus, one_or_none[i], rows, 8), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tool_spellings_resolve),
        cmocka_unit_test(test_other_products_resolve_to_none),
        cmocka_unit_test(test_near_misses_are_rows),
        cmocka_unit_test(test_every_table_gpu_has_a_tool_spelling),
        cmocka_unit_test(test_table_names_resolve_to_themselves),
        cmocka_unit_test(test_table_without_descriptive_columns),
        cmocka_unit_test(test_family_rows),
        cmocka_unit_test(test_near_rows),
    };
    return cmocka_run_group_tests(tests, setup_embedded, teardown_embedded);
}
