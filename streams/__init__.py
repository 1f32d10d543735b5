"""Stream processing: the faust app, its topics and agents, and the pure formation core."""
