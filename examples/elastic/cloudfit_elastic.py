"""The elastic plan a cloudfit launch spec passes to the training script
(docs/spot.md "Elastic plans"), for PyTorch or any other framework:

    from cloudfit_elastic import ElasticPlan
    plan = ElasticPlan.from_env()                    # CLOUDFIT_LR_FUNCTION, CLOUDFIT_BATCH_BY_NODES
    local, accum, global_batch = plan.batch(nodes)   # per-GPU batch, accumulation, global batch on `nodes` VMs
                                                     # (ValueError outside the plan's min_nodes..max_nodes)
    lr = plan.lr(global_batch, progress)             # the LR for that global batch at training progress 0..1
                                                     # (gain rule: AdaScale with the noise-scale trace)
    for step in ...: lr_now = plan.warmup(prev_lr, lr, steps_since_change)

Also readable from the recommend JSON (`chosen.elastic`) with
ElasticPlan.from_json(doc["chosen"]["elastic"]). A mixed plan (spot, then on
demand near the deadline) also passes CLOUDFIT_MIXED_PLAN: MixedPlan says when
the spot phase should leave. No dependencies."""
import json
import math
import os
import time


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
            if item:   # "2:256:1" raised "not enough values to unpack", a node count twice kept the last
                try:
                    n, m, s, g = (int(v) for v in item.split(":"))
                except ValueError:
                    raise ValueError(f"CLOUDFIT_BATCH_BY_NODES: {item!r}: expected "
                                     f"NODES:PER_GPU_BATCH:ACCUMULATION:GLOBAL_BATCH, integers") from None
                if n in by_nodes:
                    raise ValueError(f"CLOUDFIT_BATCH_BY_NODES: {item!r}: {n} nodes given twice")
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
        without a progress. A progress that is not a finite number is refused (ValueError): NaN (0/0 at a resumed
        run's start) gave a NaN B, and so a NaN learning rate."""
        if progress is not None:
            progress = float(progress)
            if not math.isfinite(progress):
                raise ValueError(f"progress: expected the fraction of training done, 0 to 1, got {progress!r}")
        if progress is None or not self.trace:
            return self.b_noise
        p = min(max(progress, 0.0), 1.0)
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
        if not (m > 0 and math.isfinite(m)):   # 0 gave an LR of 0 and a negative batch a negative LR
            raise ValueError(f"global batch: expected a positive number of samples, got {global_batch!r}")
        b = self.noise_scale(progress)         # the progress checked whatever the rule (NaN gave a NaN LR)
        if self.rule == "linear":
            return self.lr0 * m / self.m0
        if self.rule == "sqrt":
            return self.lr0 * math.sqrt(m / self.m0)
        if self.rule == "none":
            return self.lr0
        gain = (b + self.m0) * m / ((b + m) * self.m0)
        return self.lr0 * gain ** self.exponent

    def batch(self, nodes):
        """(per-GPU batch, accumulation, global batch) on `nodes` VMs: the plan holds its global batch where memory
        and max_accumulation allow. A count outside min_nodes..max_nodes is refused (ValueError): below min_nodes
        the LR rule would diverge, and above max_nodes the plan has no entry (the entry for max_nodes, returned
        before, gives a different global batch on more VMs than the one it states)."""
        if isinstance(nodes, bool) or not isinstance(nodes, int):
            raise TypeError(f"nodes: expected an integer count of VMs, got {nodes!r}")
        if not self.min_nodes <= nodes <= self.max_nodes or nodes not in self.by_nodes:
            raise ValueError(f"{nodes} VMs: the elastic plan covers {self.min_nodes} to {self.max_nodes} "
                             f"(CLOUDFIT_BATCH_BY_NODES / chosen.elastic.by_nodes)")
        return self.by_nodes[nodes]

    def warmup(self, previous_lr, target_lr, steps_since_change):
        """A jump up by warmup_factor or more is reached linearly over warmup_steps optimizer steps."""
        if target_lr < previous_lr * self.warmup_factor or steps_since_change >= self.warmup_steps:
            return target_lr
        return previous_lr + (target_lr - previous_lr) * (steps_since_change + 1) / self.warmup_steps


class MixedPlan:
    """A mixed plan's switch-over (CLOUDFIT_MIXED_PLAN, docs/spot.md "Mixed plans"): spot VMs until the latest time
    at which the same VMs on demand still finish by the deadline, then on demand to the end (the greedy rule cloudfit
    simulates: switch when now >= deadline - (left x (1 + C/tau_od) + R + C), `left` the hours of work still to do on
    all the VMs, C the checkpoint write, R a restart, tau_od the on-demand checkpoint interval).

        plan = MixedPlan.from_env()            # CLOUDFIT_MIXED_PLAN and CLOUDFIT_DEADLINE_AT (epoch seconds)
        if plan.phase == "spot" and plan.switch_due(work_left_hours):   # at each checkpoint
            save_checkpoint(); sys.exit(0)     # the on-demand phase resumes from it

    work_left_hours comes from the job's own measured speed: steps left x seconds per step on all VMs / 3600."""

    def __init__(self, deadline_at_s, restart_hours, checkpoint_hours, ondemand_interval_hours, phase="spot",
                 work_hours=None):
        self.deadline_at_s = float(deadline_at_s)
        if not math.isfinite(self.deadline_at_s):   # NaN: every comparison false, the switch never due
            raise ValueError(f"deadline: expected epoch seconds, got {deadline_at_s!r}")
        self.restart_hours, self.checkpoint_hours = float(restart_hours), float(checkpoint_hours)
        self.ondemand_interval_hours = float(ondemand_interval_hours)
        self.phase = phase
        self.work_hours = work_hours          # the plan's estimate, for reference

    @classmethod
    def from_env(cls, env=os.environ):
        p = json.loads(env["CLOUDFIT_MIXED_PLAN"])
        name = p.get("deadline_at_env", "CLOUDFIT_DEADLINE_AT")
        if name not in env:
            hours = float(p["deadline_hours"])   # the shell's $(( )) takes integers: 22.5 * 3600 is an error there
            seconds = f"{hours:.0f} * 3600" if hours.is_integer() else f"{round(hours * 3600)}"
            raise KeyError(f"{name} is not set: launch a mixed plan with the deadline in epoch seconds, e.g. "
                           f"{name}=$(( $(date +%s) + {seconds} ))")
        return cls(env[name], p["restart_hours"], p["checkpoint_hours"], p["ondemand_checkpoint_interval_hours"],
                   env.get("CLOUDFIT_PHASE", "spot"), p.get("work_hours"))

    def latest_switch_s(self, work_left_hours):
        """Epoch seconds after which on demand could no longer finish the work left by the deadline."""
        c, r, tau = self.checkpoint_hours, self.restart_hours, self.ondemand_interval_hours
        left = float(work_left_hours)
        if math.isnan(left):   # max(0.0, nan) is 0.0: NaN read as no work left, the switch came too late
            raise ValueError(f"work left: expected hours of work, got {work_left_hours!r}")
        need_h = max(0.0, left) * (1 + c / tau) + r + c
        return self.deadline_at_s - need_h * 3600.0

    def switch_due(self, work_left_hours, now_s=None):
        """True when the spot phase should save a checkpoint and leave now."""
        now = time.time() if now_s is None else float(now_s)
        if math.isnan(now):
            raise ValueError(f"now: expected epoch seconds, got {now_s!r}")
        return now >= self.latest_switch_s(work_left_hours)
