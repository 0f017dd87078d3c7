"""The elastic plan a cloudfit launch spec passes to the training script
(docs/spot.md "Elastic plans"), for PyTorch or any other framework:

    from cloudfit_elastic import ElasticPlan
    plan = ElasticPlan.from_env()                    # CLOUDFIT_LR_FUNCTION, CLOUDFIT_BATCH_BY_NODES
    local, accum, global_batch = plan.batch(nodes)   # per-GPU batch, accumulation, global batch on `nodes` VMs
    lr = plan.lr(global_batch, progress)             # the LR for that global batch at training progress 0..1
                                                     # (gain rule: AdaScale with the noise-scale trace)
    for step in ...: lr_now = plan.warmup(prev_lr, lr, steps_since_change)

Also readable from the recommend JSON (`chosen.elastic`) with
ElasticPlan.from_json(doc["chosen"]["elastic"]). No dependencies."""
import json
import math
import os


class ElasticPlan:
    def __init__(self, rule, lr0, m0, b_noise, exponent, warmup_factor, warmup_steps, by_nodes, min_nodes, max_nodes,
                 b_noise_by_progress=(), b_noise_trend=0.0):
        self.rule, self.lr0, self.m0, self.b_noise, self.exponent = rule, lr0, m0, b_noise, exponent
        self.trace = [(float(p), float(b)) for p, b in b_noise_by_progress]   # B(p), sorted by progress
        self.trend = b_noise_trend
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
                   by_nodes, f["min_nodes"], f["max_nodes"], f.get("b_noise_by_progress", ()),
                   f.get("b_noise_trend_per_progress", 0.0))

    @classmethod
    def from_json(cls, e):
        f = e["lr_function"]
        by_nodes = {p["nodes"]: (p["local_batch"], p["accumulation"], p["global_batch"]) for p in e["by_nodes"]}
        return cls(f["rule"], f["lr0"], f["m0"], f["b_noise"], f["exponent"], e["warmup"]["after_lr_jump_factor"],
                   e["warmup"]["steps"], by_nodes, e["min_nodes"], e["max_nodes"], f.get("b_noise_by_progress", ()),
                   f.get("b_noise_trend_per_progress", 0.0))

    def noise_scale(self, progress=None):
        """B at training progress 0..1 (samples seen / samples to the target): constant before the trace's first
        point, linear between its points, along its trend after its last; the effective constant without a trace or
        without a progress."""
        if progress is None or not self.trace:
            return self.b_noise
        p = min(max(float(progress), 0.0), 1.0)
        if p <= self.trace[0][0]:
            return self.trace[0][1]
        for (p0, b0), (p1, b1) in zip(self.trace, self.trace[1:]):
            if p <= p1:
                return b0 + (b1 - b0) * ((p - p0) / (p1 - p0) if p1 > p0 else 1.0)
        return self.trace[-1][1] + self.trend * (p - self.trace[-1][0])

    def lr(self, global_batch, progress=None):
        """The LR at a global batch M: lr0·((B+M0)·M/((B+M)·M0))^exponent for the gain rule (AdaScale's gain with B
        the noise scale at this point of training; its square root for Adam-family optimizers), lr0·M/M0 linear,
        lr0·√(M/M0) sqrt, lr0 none. Without a progress the run's effective B is used, which early in training
        (B still small) gives a higher LR than AdaScale would."""
        m = float(global_batch)
        if self.rule == "linear":
            return self.lr0 * m / self.m0
        if self.rule == "sqrt":
            return self.lr0 * math.sqrt(m / self.m0)
        if self.rule == "none":
            return self.lr0
        b = self.noise_scale(progress)
        gain = (b + self.m0) * m / ((b + m) * self.m0)
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
