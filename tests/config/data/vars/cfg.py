work_dir = './work_dirs/{{ fileBasenameNoExtension }}'
here = '{{ fileDirname }}'
name = '{{fileBasename}}'
ext = '{{ fileExtname }}'
data_root = '{{$RUNNERX_TEST_DATA_ROOT:/data/default}}/images'
num_classes = {{'$RUNNERX_TEST_NUM_CLASSES:80'}}
