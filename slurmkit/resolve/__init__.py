"""Every decision: a JobSpec and a SiteProfile become a Plan and findings."""
