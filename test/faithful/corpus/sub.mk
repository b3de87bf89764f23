# sub.mk - the sub-make of Makefile.
sub:
	@echo "in the sub-make, level $(MAKELEVEL)"
