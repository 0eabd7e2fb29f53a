"""What a cluster is: site profiles, their limits, module catalogues, and detecting the cluster one is on."""
