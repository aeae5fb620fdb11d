# run2 (tree 7708861, slimmed with bench/device_slim.sh on), as sent to the device tool
R=/tmp/res; export LTX2_DEVICE_DEADLINE_S=450 LTX2_DEVICE_CTEST=0; bash bench/device_run.sh $R all > /tmp/run_all.log 2>&1; cp /tmp/run_all.log $R/; tar czf "$OUT/res.tgz" -C /tmp res; cat $R/summary.txt
