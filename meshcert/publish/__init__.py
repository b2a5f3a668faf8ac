"""Publishing a certified layer package on the Hugging Face Hub (`meshcert package publish`).

- `plan`: what to upload, in which commits (sized under the Hub's limits), and what is already
  there;
- `card`: the model card (mesh-llm's card fields, right for v1 and v2);
- `catalog`: the catalog entry (`entries/<owner>/<repo>.json`) with the package pinned;
- `hub_writer`: the small interface over huggingface_hub (uploads over plain LFS, never Xet);
- `request`: what a publish is asked (PublishRequest) and what it reports (PublishResult);
- `service`: the use case, request in, result out. It never prints and never exits.
"""
