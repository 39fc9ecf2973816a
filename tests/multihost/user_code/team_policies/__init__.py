"""A team's own policies: the module a user keeps in their folder, installed on no host of the rig."""
