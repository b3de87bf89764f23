# cuda.cmake - NVIDIA's side of the build: the CUPTI backend (the pieces
# named below, src/sources.txt) is built when CUDA's headers are found.
# Only headers are needed at build time; the driver, CUPTI, NVML and NVTX's
# tools are loaded at run time.
#
# The "#:" lines are this vendor's build facts, read by cmake/vendor.cmake
# (for CMakeLists.txt) and by python/kscope_setup.py, so both builds look
# in the same places:
#   option   the CMake option (and Python build's environment variable,
#            0 turns it off) and its description
#   have     the variable and C macro set when the headers are found
#   label    what the status line calls what is built
#   roots    folders to search ($VAR: an environment variable's value)
#   subdirs  where headers lie under each root
#   include  a cache variable holding the folder where all its files are
#   pieces   what src/sources.txt pieces the found headers build
#: option KSCOPE_CUDA Build the CUPTI backend when CUDA is found
#: have KSCOPE_HAVE_CUDA
#: label CUPTI backend
#: roots $CUDA_HOME $CUDA_PATH /usr/local/cuda
#: subdirs include extras/CUPTI/include
#: include KSCOPE_CUPTI_INCLUDE cupti.h
#: include KSCOPE_CUDA_INCLUDE cuda.h nvtx3/nvToolsExt.h
#: pieces gpu-cuda
