// Compiles cmake/pch.h once (the target gpuadmit_pch, cmake/pch.cmake); nothing else.
