#!/usr/bin/env python3
# Writes an AdmissionReview's object with the managedFields the API server's field manager sets
# before mutating admission for a controller's write (one kube-controller-manager Update entry),
# in structured-merge-diff's FieldsV1 encoding: "f:<field>" per member, "k:<merge key JSON>" per
# item of a keyed list, "." for a node that is itself set, keys sorted. The ServiceAccount
# admission plugin's token volume, added after the field manager, is left out of them.
#
#   python3 bench/managed_fields.py bench/webhook-review.json > bench/webhook-review-managed-fields.json
import json
import sys

MERGE_KEYS = {  # core/v1 list-map keys (patchMergeKey / listMapKeys)
  'containers': ['name'], 'initContainers': ['name'], 'ephemeralContainers': ['name'],
  'env': ['name'], 'volumeMounts': ['mountPath'], 'volumes': ['name'],
  'ports': ['containerPort', 'protocol'], 'ownerReferences': ['uid'],
}
ATOMIC = {'command', 'args', 'tolerations', 'drop', 'add', 'groups', 'sources', 'items'}
def fields(v, key=None, top=False):
  if isinstance(v, dict):
    out = {} if top else {'.': {}}
    for k, c in v.items():
      out['f:' + k] = fields(c, k)
    return out if v else {}
  if isinstance(v, list):
    if key in MERGE_KEYS and v and all(isinstance(i, dict) for i in v):
      out = {'.': {}}
      for item in v:
        mk = {k: item[k] for k in MERGE_KEYS[key] if k in item}
        out['k:' + json.dumps(mk, separators=(',', ':'))] = fields(item)
      return out
    return {}
  return {}
review = json.load(open(sys.argv[1]))
obj = review['request']['object']
meta = {k: v for k, v in obj['metadata'].items() if k not in ('name', 'namespace', 'uid', 'creationTimestamp')}
spec = json.loads(json.dumps(obj['spec']))
# The ServiceAccount admission plugin adds the token volume after the field manager ran.
spec['volumes'] = [v for v in spec.get('volumes', []) if not v['name'].startswith('kube-api-access-')]
for c in spec.get('containers', []) + spec.get('initContainers', []):
  c['volumeMounts'] = [m for m in c.get('volumeMounts', []) if not m['name'].startswith('kube-api-access-')]
  if not c['volumeMounts']: del c['volumeMounts']
fs = {'f:metadata': fields(meta, top=True), 'f:spec': fields(spec, top=True)}
fs['f:metadata']['f:ownerReferences'] = {'.': {}, **{'k:' + json.dumps({'uid': o['uid']}, separators=(',', ':')): {} for o in obj['metadata'].get('ownerReferences', [])}}
mf = [{'manager': 'kube-controller-manager', 'operation': 'Update', 'apiVersion': 'v1',
       'time': '2026-11-28T08:00:00Z', 'fieldsType': 'FieldsV1', 'fieldsV1': json.loads(json.dumps(fs, sort_keys=True))}]
md = {}
for k, v in obj['metadata'].items():
  md[k] = v
  if k == 'ownerReferences': md['managedFields'] = mf
if 'managedFields' not in md: md['managedFields'] = mf
obj['metadata'] = md
print(json.dumps(review, separators=(',', ':')))
