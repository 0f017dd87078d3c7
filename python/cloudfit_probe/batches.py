"""Micro-batches of exactly CLOUDFIT_LOCAL_BATCH samples from what the user
has: a map-style Dataset (batched and shuffled here, split across the
workers of a data-parallel run), a DataLoader over one (re-batched, keeping
its collate function and workers), a function of the batch size that
returns an iterable of batches, or any iterable whose batches already have
the right size. A new epoch starts when one runs out."""
import torch

from .protocol import ProbeError


def batch_size_of(batch):
    """Samples in a batch: the first dimension of its first tensor."""
    if torch.is_tensor(batch):
        return batch.shape[0] if batch.dim() else None
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, (list, tuple)):
        for item in batch:
            n = batch_size_of(item)
            if n is not None:
                return n
    return None


def to_device(batch, device, memory_format):
    """The batch's tensors on `device`, in `memory_format`: 4-D floating
    ones channels-last for "channels_last", 5-D ones for "channels_last_3d"."""
    if torch.is_tensor(batch):
        t = batch.to(device, non_blocking=True)
        if t.is_floating_point() and memory_format == "channels_last" and t.dim() == 4:
            t = t.contiguous(memory_format=torch.channels_last)
        elif t.is_floating_point() and memory_format == "channels_last_3d" and t.dim() == 5:
            t = t.contiguous(memory_format=torch.channels_last_3d)
        return t
    if isinstance(batch, dict):
        return {k: to_device(v, device, memory_format) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        moved = [to_device(v, device, memory_format) for v in batch]
        if isinstance(batch, tuple):
            return type(batch)(*moved) if hasattr(batch, "_fields") else tuple(moved)  # a namedtuple, or not
        return moved
    return batch


def _is_map_dataset(obj):
    return isinstance(obj, torch.utils.data.Dataset) and not isinstance(obj, torch.utils.data.IterableDataset) \
        and hasattr(obj, "__getitem__") and hasattr(obj, "__len__")


class MicroBatches:
    """An endless stream of micro-batches of `batch_size` samples for this
    worker (`rank` of `world`)."""

    def __init__(self, source, batch_size, seed, rank=0, world=1):
        self.batch_size, self.seed, self.rank, self.world = batch_size, seed, rank, world
        self.epoch = 0
        self._make = self._factory(source)
        self._it = None

    def _loader(self, dataset, like=None):
        if len(dataset) < self.batch_size * self.world:
            raise ProbeError("the dataset has %d samples, fewer than one batch of %d%s" % (
                len(dataset), self.batch_size, " per worker" if self.world > 1 else ""))
        kwargs = {}
        if like is not None:
            kwargs = dict(num_workers=like.num_workers, collate_fn=like.collate_fn, pin_memory=like.pin_memory)
        if self.world > 1:
            sampler = torch.utils.data.distributed.DistributedSampler(
                dataset, num_replicas=self.world, rank=self.rank, shuffle=True, seed=self.seed, drop_last=True)
            sampler.set_epoch(self.epoch)
            return torch.utils.data.DataLoader(dataset, batch_size=self.batch_size, sampler=sampler, drop_last=True,
                                               **kwargs)
        generator = torch.Generator()
        generator.manual_seed(self.seed + self.epoch)
        return torch.utils.data.DataLoader(dataset, batch_size=self.batch_size, shuffle=True, drop_last=True,
                                           generator=generator, **kwargs)

    def _factory(self, source):
        if callable(source) and not _is_map_dataset(source) and not isinstance(source, torch.utils.data.DataLoader):
            return lambda: iter(source(self.batch_size))
        if _is_map_dataset(source):
            return lambda: iter(self._loader(source))
        if isinstance(source, torch.utils.data.DataLoader):
            if _is_map_dataset(source.dataset):
                return lambda: iter(self._loader(source.dataset, like=source))
            if source.batch_size != self.batch_size:
                raise ProbeError("the DataLoader over an IterableDataset yields batches of %s, cloudfit asked for "
                                 "%d (CLOUDFIT_LOCAL_BATCH): pass a function batches(batch_size) instead" % (
                                     source.batch_size, self.batch_size))
            return lambda: iter(source)
        try:
            iter(source)
        except TypeError:
            raise ProbeError("batches: expected a Dataset, a DataLoader, a function of the batch size or an "
                             "iterable of batches, got %s" % type(source).__name__) from None
        if iter(source) is source:  # a one-shot iterator: one pass only
            state = {"used": False}

            def once():
                if state["used"]:
                    raise ProbeError("batches ran out: an iterator gives one pass; pass a Dataset, a DataLoader "
                                     "or a function of the batch size to allow more steps")
                state["used"] = True
                return source
            return once
        return lambda: iter(source)

    def next(self):
        for _ in range(2):
            if self._it is None:
                self._it = self._make()
            try:
                batch = next(self._it)
            except StopIteration:
                self._it = None
                self.epoch += 1
                continue
            n = batch_size_of(batch)
            if n != self.batch_size:
                raise ProbeError("a batch of %s samples, cloudfit asked for %d (CLOUDFIT_LOCAL_BATCH): pass the "
                                 "Dataset, or a function that makes batches of a given size" % (n, self.batch_size))
            return batch
        raise ProbeError("batches gave no batch of %d samples (an empty data set?)" % self.batch_size)
