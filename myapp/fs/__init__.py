"""Files the platform touches on behalf of jobs: ``beneath`` is the one way into a folder a job can write."""
