# AMX row on 2 cores of the lent machine's CPU: kernels and throughput, the device image's libraries.
set -x
python3 .dev/restore.py
export PYTHONPATH=$PWD/.dev/site STSB_DIR=$PWD/.dev/stsb PYTHONUNBUFFERED=1
lscpu > $OUT/lscpu.txt; lscpu -e >> $OUT/lscpu.txt
# two CPUs on distinct physical cores (as the 2-core VMs have: one thread per core)
CPUS=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -u | head -2 | cut -d, -f1 | paste -sd,)
echo "pinned to CPUs $CPUS" | tee $OUT/pinned.txt
python3 -c "import onnxruntime, torch, transformers, sentence_transformers as s; print('ort', onnxruntime.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__, 'st', s.__version__)" | tee -a $OUT/pinned.txt
uptime | tee -a $OUT/pinned.txt
timeout 230 taskset -c $CPUS python3 bench/kernels.py --repeats 3 > $OUT/kernels.txt 2>&1; tail -12 $OUT/kernels.txt
cp bench/results/kernels.json $OUT/kernels.json
timeout 300 taskset -c $CPUS python3 bench/throughput.py --repeats 3 --no-peers > $OUT/throughput.txt 2>&1; tail -30 $OUT/throughput.txt
cp bench/results/throughput.json $OUT/throughput.json
uptime
