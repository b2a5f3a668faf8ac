"""Running meshcert on Hugging Face Jobs: plans that say what they will cost before anything is
spent, the job commands, and the launcher that follows jobs to their end.

- `hardware`: the Hub's flavor list (`list_jobs_hardware()`) as numbers, and the cheapest
  flavor whose disk, memory and cores fit a plan;
- `costs`: the disk, wall clock and maximum cost a job needs, from bytes at stated rates;
- `report_channel`: a report carried through a job's logs (bucket sync needs Xet, which has
  failed inside jobs), checksummed so a cut or mangled log is an error, never a report.
"""
