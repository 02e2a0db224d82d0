"""Packaging for the ML platform (`myapp`)."""
from setuptools import find_packages, setup

# Pinned working ranges: Flask-AppBuilder 5.3's security API fails with marshmallow 4.
INSTALL_REQUIRES = [
    "Flask-AppBuilder==5.3.0",
    "marshmallow>=3.26,<4",
    "Flask>=3.1,<3.2",
    "Flask-SQLAlchemy>=3.1,<3.2",
    "SQLAlchemy>=2.0.30,<2.2",
    "alembic>=1.13,<2",
    "celery[redis]>=5.4,<6",
    "kombu>=5.4,<6",
    "redis>=5,<7",
    "psycopg[binary]>=3.2,<4",
    "gunicorn>=23,<28",
    "croniter>=2,<7",
    "PyYAML>=6,<7",
    "Jinja2>=3.1,<4",
    "jsonschema>=4.20,<5",
    "kubernetes-validate>=1.28",
    "kubernetes>=30",
    "psutil>=5.9,<8",
    "Flask-Caching>=2.3,<3",
    # myapp/auth/logins.py counts sign-in attempts with it (Flask-Limiter's engine; FAB brings it too).
    "limits>=5,<6",
    # The notebook proxy (myapp/notebooks/proxy.py): HTTP and websockets to JupyterLab, beside gunicorn.
    "aiohttp>=3.9,<4",
    # myapp/auth/sealed.py: secrets kept in SQL (webhook secrets, notebook tokens) are Fernet-encrypted.
    "cryptography>=42",
    # myapp/api/base.py encodes list pages with it (datetimes, enums and embedded JSON text in C).
    "orjson>=3.10,<4",
    # Hyperparameter search (myapp/experiments/study.py): TPE, CMA-ES (with cmaes), random, grid, QMC, NSGA-II and
    # the median / successive-halving / Hyperband pruners through ask/tell. Pinned below 5: the study is rebuilt
    # from our rows through create_trial/add_trial and the samplers' random states, which a major release may move.
    "optuna>=4.5,<5",
    "cmaes>=0.11,<1",
]

TEST_REQUIRES = [
    "pytest>=8,<10",
    "pytest-xdist>=3.5,<4",
    "hypothesis>=6.100,<7",
    "requests>=2.31,<3",
    # tests/test_fuzz_api.py: every OpenAPI operation fuzzed in-process. Pinned: its engine API moves between
    # releases; it takes hypothesis>=6.130.12,<7.
    "schemathesis==4.32.5",
    # Drives Debian's /usr/bin/chromium (never a downloaded browser) for the UI tests and benchmarks/editor.py.
    "playwright>=1.50,<2",
    # tests/serving: builds the ONNX models the model server is tested with (torch.onnx.export needs it).
    "onnx>=1.16,<2",
    # tests/outputs/test_outputs_s3.py: a real S3 server (moto's ThreadedMotoServer) in the test, read with boto3.
    "moto[server]>=5,<6",
    "boto3>=1.34,<2",
    # tests/test_checkpoint.py: the xgboost template's save on SIGTERM, run for real (CPU build, the image's release).
    "xgboost-cpu==3.0.5",
    # Linters `make lint` runs (settings in pyproject.toml).
    "ruff==0.17.6",
    "mypy==2.4.1",
]

setup(
    name="myapp",
    version="0.1.0",
    description="A machine-learning platform: projects, notebooks, pipelines, distributed training, serving.",
    packages=find_packages(include=["myapp", "myapp.*"]),
    # The tree's root is the source root: an editable install is a plain .pth entry (what `setup.py develop`
    # made), not setuptools' import finder, which warns about same-named folders on every install.
    package_dir={"": "."},
    # Data files are named here, each under the package that reads it (no MANIFEST.in): the CRD schemas'
    # folder is no package of its own. The upstream CRD schemas rendering validates against (README there
    # gives source and version).
    package_data={"myapp.rendering": ["crds/*.json", "crds/README.md"],
                  # the simulator page's sample trace (docs/scheduling.md)
                  "myapp.scheduler.traces": ["*.csv", "README.md"],
                  # the page a notebook's origin answers when it cannot serve one (myapp/notebooks/notice.py)
                  "myapp.notebooks": ["*.html"]},
    python_requires=">=3.11",
    install_requires=INSTALL_REQUIRES,
    extras_require={
        "test": TEST_REQUIRES,
        # The example pipeline (DDP on CPU, digits from scikit-learn). torch is pinned: a range admitting
        # newer releases pulls several GB of CUDA packages.
        "ml": ["torch==2.13.0", "scikit-learn>=1.5,<2"],
        "gpu": ["nvidia-ml-py>=12"],
        # Task outputs in an S3-compatible store (MYAPP_OUTPUTS_S3_BUCKET, myapp/outputs/s3.py).
        "s3": ["boto3>=1.34,<2"],
        # Local notebooks run JupyterLab with the platform's Python (`make install` installs it).
        "notebook": ["jupyterlab>=4.2,<5"],
        # Local model servers (job-templates/deploy-service/main.py): joblib/scikit-learn, TorchScript (torch
        # from "ml"), ONNX through onnxruntime.
        "serving": ["scikit-learn>=1.5,<2", "joblib>=1.4", "onnxruntime>=1.17"],
    },
    entry_points={"console_scripts": ["myapp=myapp.cli:main"]},
)
