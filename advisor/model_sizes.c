#include "cloudfit/model_sizes.h"

#include <strings.h>

static const cf_model_size sizes[] = {
    {"cifar10", "ResNet-18 (CIFAR variant)", 11173962,
     "kuangliu/pytorch-cifar ResNet18, as in the AdaptDL cifar10 example"},
    {"imagenet", "ResNet-50", 25557032, "torchvision resnet50"},
    {"resnet50", "ResNet-50", 25557032, "torchvision resnet50"},
    {"bert", "BERT-base uncased + SQuAD head", 109483778,
     "bert-base-uncased (109,482,240) + 2×768+2 span head (Devlin et al. 2019)"},
    {"yolov3", "YOLOv3 (Darknet-53)", 61949149, "ultralytics yolov3.cfg, 80 classes"},
    {"ncf", "NeuMF on MovieLens-1M", 1602657,
     "guoyang9/NCF defaults (factor_num 32, 3 MLP layers) on 6,040 users × 3,706 items, as in the AdaptDL ncf example"},
    {"deepspeech2", "DeepSpeech2 (2 conv + 5 × 1024 bidirectional LSTM)", 86.6e6,
     "approximate: deepspeech.pytorch defaults (161 mel bins, 2 conv layers, 5 bidirectional LSTM layers of 1024)"},
    {"gpt2", "GPT-2 small", 124439808, "Radford et al. 2019, HF gpt2"},
};

const cf_model_size *cf_model_size_find(const char *name)
{
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (strcasecmp(sizes[i].name, name) == 0)
            return &sizes[i];
    return 0;
}

const cf_model_size *cf_model_sizes(int *out_count)
{
    *out_count = (int)(sizeof sizes / sizeof *sizes);
    return sizes;
}
