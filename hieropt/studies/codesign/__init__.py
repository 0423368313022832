"""Co-design of the training plan with the network (issue 14)."""
