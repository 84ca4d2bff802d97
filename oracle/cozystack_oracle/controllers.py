"""What controllers write after a chart is applied, that a nested release
reads through ``valuesFrom`` or a later render (an upgrade) through
``lookup``.

The oracle resolves every nested release (docs/oracle.md, "Nested
releases"); a source no chart renders must come from here, modelled after
the controller that writes it, or the render is the oracle's error. Each
model writes the shape its readers in the release's charts use, with
placeholder credentials.

- **COSI** (``objectstorage.k8s.io/v1alpha1``): for a ``BucketAccess``
  with ``credentialsSecretName``, the objectstorage sidecar writes that
  Secret with one key, ``BucketInfo``, a JSON document whose ``spec``
  holds ``bucketName`` and ``secretS3`` (``endpoint``, ``region``,
  ``accessKeyID``, ``accessSecretKey``). Readers:
  ``apps/harbor/templates/harbor.yaml`` (``valuesFrom`` at the root,
  read by ``system/harbor/templates/bucket-secret.yaml``) and
  ``system/bucket/templates/user-credentials.yaml`` (``lookup``), whose
  comment describes the document.
- **StatefulSets**: the controller creates a PersistentVolumeClaim per
  volume claim template and replica (SeaweedFS's topology guard looks up
  ``data1-<release>-volume-0``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator


def _bucket_info(access: dict) -> dict:
    name = access["metadata"]["name"]
    return {
        "apiVersion": "objectstorage.k8s.io/v1alpha1",
        "kind": "BucketInfo",
        "metadata": {"name": f"bc-{name}"},
        "spec": {
            "bucketName": f"bucket-{name}",
            "authenticationType": "KEY",
            "protocols": ["s3"],
            "secretS3": {
                "endpoint": "https://s3.example.org",
                "region": "us-east-1",
                "accessKeyID": "ORACLEACCESSKEY",
                "accessSecretKey": "oracle-secret-key",
            },
        },
    }


def written(objects: Iterable[dict], namespace: str) -> Iterator[dict]:
    """The objects controllers write for ``objects`` (a render applied in
    ``namespace``)."""
    for obj in objects:
        if obj.get("kind") == "BucketAccess" and str(obj.get("apiVersion", "")).startswith("objectstorage.k8s.io/"):
            secret = (obj.get("spec") or {}).get("credentialsSecretName")
            if not secret:
                continue
            info = json.dumps(_bucket_info(obj))
            yield {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": secret, "namespace": obj["metadata"].get("namespace") or namespace},
                "type": "Opaque",
                "data": {"BucketInfo": base64.b64encode(info.encode()).decode()},
            }


def _claims(statefulset: dict) -> Iterator[dict]:
    """The PersistentVolumeClaims the StatefulSet controller creates for
    ``statefulset``: one per volume claim template and replica, named
    ``<template>-<statefulset>-<ordinal>`` (``k8s.io/kubernetes/pkg/
    controller/statefulset``, ``getPersistentVolumeClaimName``)."""
    spec = statefulset.get("spec") or {}
    meta = statefulset.get("metadata") or {}
    replicas = spec.get("replicas", 1)
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        return
    for template in spec.get("volumeClaimTemplates") or []:
        name = ((template or {}).get("metadata") or {}).get("name")
        if not isinstance(name, str):
            continue
        for ordinal in range(min(replicas, 16)):
            yield {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": f"{name}-{meta.get('name')}-{ordinal}", "namespace": meta.get("namespace")},
                "spec": (template or {}).get("spec") or {},
            }


def after_apply(objects: list[dict]) -> Iterator[dict]:
    """Everything controllers write once ``objects`` (applied, with their
    namespaces) are in the cluster: :func:`written`, and the claims of
    every StatefulSet (at most 16 replicas each: the lookups that read them
    ask for the first)."""
    for obj in objects:
        if obj.get("kind") == "StatefulSet" and str(obj.get("apiVersion", "")).startswith("apps/"):
            yield from _claims(obj)
    for obj in objects:
        yield from written([obj], (obj.get("metadata") or {}).get("namespace", ""))
