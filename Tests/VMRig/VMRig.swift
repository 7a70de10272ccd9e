import CVMRig
