#include "model_sizes.h"

#include <stddef.h>

#include "cloudfit/common/names.h"

static const cf_model_size sizes[] = {
    {"cifar10", "ResNet-18 (CIFAR variant)", 11173962,
     "kuangliu/pytorch-cifar ResNet18, as in the AdaptDL cifar10 example"},
    {"imagenet", "ResNet-50", 25557032, "torchvision resnet50"},
    {"resnet50", "ResNet-50", 25557032, "torchvision resnet50"},
    {"bert", "BERT-base uncased + SQuAD head", 109483778,
     "bert-base-uncased (109,482,240) + 2×768+2 span head (Devlin et al. 2019)"},
    {"yolov3", "YOLOv3 (Darknet-53)", 61949149,
     "ultralytics yolov3.cfg, 80 classes (the AdaptDL benchmark's 20-class VOC head has 61,626,049, 0.5 % fewer)"},
    {"ncf", "NeuMF on MovieLens-1M", 1602657,
     "guoyang9/NCF defaults (factor_num 32, 3 MLP layers) on 6,040 users × 3,706 items, as in the AdaptDL ncf example"},
    {"deepspeech2", "DeepSpeech2 (2 conv + 5 × 800 bidirectional GRU)", 41187968,
     "petuum/adaptdl osdi21 benchmark/models/deepspeech2 (the model behind the Pollux traces): 161-bin "
     "spectrogram, conv 41×11 and 21×11 (32 channels), 5 bidirectional GRU layers of 800, 29 labels; counted"},
    {"gpt2", "GPT-2 small", 124439808, "Radford et al. 2019, HF gpt2"},
    /* torchvision classification models: num_params of the model builders'
     * IMAGENET1K weights documentation (1,000 classes). */
    {"resnet18", "ResNet-18", 11689512, "torchvision resnet18"},
    {"resnet34", "ResNet-34", 21797672, "torchvision resnet34"},
    {"resnet101", "ResNet-101", 44549160, "torchvision resnet101"},
    {"resnet152", "ResNet-152", 60192808, "torchvision resnet152"},
    {"vgg16", "VGG-16", 138357544, "torchvision vgg16"},
    {"vgg19", "VGG-19", 143667240, "torchvision vgg19"},
    {"alexnet", "AlexNet", 61100840, "torchvision alexnet"},
    {"mobilenet_v2", "MobileNetV2", 3504872, "torchvision mobilenet_v2"},
    {"densenet121", "DenseNet-121", 7978856, "torchvision densenet121"},
    {"inception_v3", "Inception v3", 27161264, "torchvision inception_v3 (with the auxiliary classifier)"},
    {"efficientnet_b0", "EfficientNet-B0", 5288548, "torchvision efficientnet_b0"},
    {"vit_b_16", "ViT-B/16", 86567656, "torchvision vit_b_16"},
    /* Hugging Face checkpoints: parameters of the base model. */
    {"bert-base", "BERT-base uncased", 109482240, "HF bert-base-uncased"},
    {"bert-large", "BERT-large uncased", 335141888, "HF bert-large-uncased"},
    {"bert_base_squad", "BERT-base uncased + SQuAD head", 109483778, "HF bert-base-uncased + 2×768+2 span head"},
    {"bert_large_squad", "BERT-large uncased + SQuAD head", 335143938,
     "HF bert-large-uncased (335,141,888) + 2×1024+2 span head"},
    {"roberta-base", "RoBERTa-base", 124645632, "HF roberta-base"},
    {"gpt2-medium", "GPT-2 medium", 354823168, "HF gpt2-medium"},
    {"gpt2-large", "GPT-2 large", 774030080, "HF gpt2-large"},
    {"gpt2-xl", "GPT-2 XL", 1557611200, "HF gpt2-xl"},
    {"t5-small", "T5 small", 60506624, "HF t5-small"},
    {"t5-base", "T5 base", 222903552, "HF t5-base"},
};

const cf_model_size *cf_model_size_find(const char *name)
{
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        /* "ResNet-50", "resnet_50" and "resnet50" are one model */
        if (cf_names_equal(sizes[i].name, name, CF_MODEL_NAME_SEPARATORS))
            return &sizes[i];
    return 0;
}

const cf_model_size *cf_model_sizes(int *out_count)
{
    *out_count = (int)(sizeof sizes / sizeof *sizes);
    return sizes;
}
