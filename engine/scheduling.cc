// placeholder: implemented by the mutators work
