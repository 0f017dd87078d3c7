"""The elastic plan a cloudfit launch spec passes to the training script
(docs/spot.md "Elastic plans"), for PyTorch or any other framework:

    from cloudfit_elastic import ElasticPlan
    plan = ElasticPlan.from_env()                    # CLOUDFIT_LR_FUNCTION, CLOUDFIT_BATCH_BY_NODES
    local, accum, global_batch = plan.batch(nodes)   # per-GPU batch, accumulation, global batch on `nodes` VMs
    lr = plan.lr(global_batch)                       # the LR for that global batch (gain rule: AdaScale)
    for step in ...: lr_now = plan.warmup(prev_lr, lr, steps_since_change)

Also readable from the recommend JSON (`chosen.elastic`) with
ElasticPlan.from_json(doc["chosen"]["elastic"]). No dependencies."""
import json
import math
import os


class ElasticPlan:
    def __init__(self, rule, lr0, m0, b_noise, exponent, warmup_factor, warmup_steps, by_nodes, min_nodes, max_nodes):
        self.rule, self.lr0, self.m0, self.b_noise, self.exponent = rule, lr0, m0, b_noise, exponent
        self.warmup_factor, self.warmup_steps = warmup_factor, warmup_steps
        self.by_nodes = by_nodes            # {nodes: (per_gpu_batch, accumulation, global_batch)}
        self.min_nodes, self.max_nodes = min_nodes, max_nodes

    @classmethod
    def from_env(cls, env=os.environ):
        f = json.loads(env["CLOUDFIT_LR_FUNCTION"])
        by_nodes = {}
        for item in env.get("CLOUDFIT_BATCH_BY_NODES", "").split(","):
            if item:
                n, m, s, g = (int(v) for v in item.split(":"))
                by_nodes[n] = (m, s, g)
        return cls(f["rule"], f["lr0"], f["m0"], f["b_noise"], f["exponent"], f["warmup_factor"], f["warmup_steps"],
                   by_nodes, f["min_nodes"], f["max_nodes"])

    @classmethod
    def from_json(cls, e):
        f = e["lr_function"]
        by_nodes = {p["nodes"]: (p["local_batch"], p["accumulation"], p["global_batch"]) for p in e["by_nodes"]}
        return cls(f["rule"], f["lr0"], f["m0"], f["b_noise"], f["exponent"], e["warmup"]["after_lr_jump_factor"],
                   e["warmup"]["steps"], by_nodes, e["min_nodes"], e["max_nodes"])

    def lr(self, global_batch):
        """The LR at a global batch M: lr0·((B+M0)·M/((B+M)·M0))^exponent for the gain rule (AdaScale's gain; its
        square root for Adam-family optimizers), lr0·M/M0 linear, lr0·√(M/M0) sqrt, lr0 none."""
        m = float(global_batch)
        if self.rule == "linear":
            return self.lr0 * m / self.m0
        if self.rule == "sqrt":
            return self.lr0 * math.sqrt(m / self.m0)
        if self.rule == "none":
            return self.lr0
        gain = (self.b_noise + self.m0) * m / ((self.b_noise + m) * self.m0)
        return self.lr0 * gain ** self.exponent

    def batch(self, nodes):
        """(per-GPU batch, accumulation, global batch) on `nodes` VMs: the plan holds its global batch where memory
        and max_accumulation allow; below min_nodes it is not valid (the LR rule would diverge)."""
        if nodes < 1:
            raise ValueError("no VMs")
        return self.by_nodes[min(nodes, self.max_nodes)]

    def warmup(self, previous_lr, target_lr, steps_since_change):
        """A jump up by warmup_factor or more is reached linearly over warmup_steps optimizer steps."""
        if target_lr < previous_lr * self.warmup_factor or steps_since_change >= self.warmup_steps:
            return target_lr
        return previous_lr + (target_lr - previous_lr) * (steps_since_change + 1) / self.warmup_steps
