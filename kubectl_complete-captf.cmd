@echo off
rem kubectl 1.26 and later runs this shim to complete `kubectl captf` on
rem Windows. Krew cannot put it on PATH: copy it beside kubectl-captf.exe.
kubectl-captf.exe __complete %*
